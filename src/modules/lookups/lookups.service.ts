/**
 * Receiver lookups: what a sender can pay a receiver (a UMA address or an external account) — the
 * currencies, an estimated rate from the sender's currency, the bounds of the received amount, and
 * what the receiver needs to know about the payer — and the `lookupId` that `POST /quotes` honours.
 *
 * A lookup is answered and recorded in one unit: the record is what a quote checks its `lookupId`
 * against (same platform, same receiver, same sender, not expired, the payer data supplied).
 * Receivers are the sandbox UMA parties of src/modules/payments/sandbox-outcomes.ts (any other UMA
 * address is 404 `UMA_NOT_FOUND`, as quotes answer) and the platform's own external accounts.
 */
import { errors } from '../../http/errors.ts';
import { cappedAmount } from '../../lib/amounts.ts';
import { currency } from '../../lib/currencies.ts';
import { iso } from '../../lib/time.ts';
import { applyRate, sandboxRate } from '../../lib/rates.ts';
import type { CustomerRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { findActiveByUmaAddress, findCustomer } from '../customers/customers.repo.ts';
import { sendingLimits } from '../exchange-rates/exchange-rates.service.ts';
import type { ResolvedDestination } from '../payments/parties.ts';
import { findLiveExternalAccount } from '../payments/payments.repo.ts';
import { sandboxUmaParty } from '../payments/sandbox-outcomes.ts';
import { settingsOf } from '../platforms/platform-settings.ts';
import { lookupErrors } from './lookups.errors.ts';
import { findLookup, insertLookup, pruneExpiredLookups } from './lookups.repo.ts';
import type {
  CounterpartyFieldWire,
  CurrencyPreferenceWire,
  LookupQueryT,
  ReceiverExternalAccountLookupWire,
  ReceiverUmaLookupWire,
} from './lookups.schemas.ts';
import type { LookupReceiverKind, LookupRow } from './lookups.tables.ts';

/**
 * How long a `lookupId` can be quoted with: three quote lifetimes (5 minutes each), so a quote that
 * expired during review can be made again from the same lookup. The live API documents none.
 */
export const LOOKUP_TTL_MS = 15 * 60_000;

/**
 * What the sandbox UMA receivers need to know about the payer: the live docs' example (full name
 * and birth date, both mandatory). External accounts ask for nothing beyond the quote itself.
 */
export const UMA_PAYER_FIELDS: readonly CounterpartyFieldWire[] = [
  { name: 'FULL_NAME', mandatory: true },
  { name: 'BIRTH_DATE', mandatory: true },
];
const ACCOUNT_PAYER_FIELDS: readonly CounterpartyFieldWire[] = [];

/** A UMA address's shape, `$user@domain` (the sender's; the receiver's is checked by the sandbox party lookup). */
const UMA_ADDRESS = /^\$[a-z0-9._+-]{1,64}@[a-z0-9.-]{1,253}$/i;

interface Sender {
  customerId: string;
  /** The currency estimates are given from: the customer's first currency, else the platform's. */
  currency: string;
}

/** GET /receiver/uma/{receiverUmaAddress}. */
export async function lookupUma(u: Unit, address: string, q: LookupQueryT): Promise<ReceiverUmaLookupWire> {
  checkSender(q);
  const party = sandboxUmaParty(address, u.app.config.sandboxUmaDomain, 'receiverUmaAddress');
  const sender = await resolveSender(u, q);
  const answer = await record(u, 'UMA_ADDRESS', address.toLowerCase(), sender, [party.currency], UMA_PAYER_FIELDS);
  return { receiverUmaAddress: address, ...answer };
}

/** GET /receiver/external-account/{accountId}: one of the platform's external accounts (customer-owned or its own). */
export async function lookupExternalAccount(u: Unit, accountId: string, q: LookupQueryT): Promise<ReceiverExternalAccountLookupWire> {
  checkSender(q);
  const account = await findLiveExternalAccount(u.trx, u.platform.id, accountId);
  if (!account) throw errors.notFound('External account', accountId);
  const sender = await resolveSender(u, q);
  const answer = await record(u, 'EXTERNAL_ACCOUNT', account.id, sender, [account.currency], ACCOUNT_PAYER_FIELDS);
  return { accountId: account.id, ...answer };
}

/** The sender's identifiers as given, before anything is looked up: one at least, a UMA address well-formed. */
function checkSender(q: LookupQueryT): void {
  if (q.customerId === undefined && q.senderUmaAddress === undefined) throw lookupErrors.senderMissing();
  if (q.senderUmaAddress !== undefined && !UMA_ADDRESS.test(q.senderUmaAddress)) throw lookupErrors.senderUmaMalformed(q.senderUmaAddress);
}

/**
 * The platform's customer a lookup is for: by `customerId`, by `senderUmaAddress` (a customer's
 * UMA address, compared in lowercase as customers store it), or by both when they agree.
 */
async function resolveSender(u: Unit, q: LookupQueryT): Promise<Sender> {
  let customer: CustomerRow | undefined;
  if (q.customerId !== undefined) {
    customer = await findCustomer(u.trx, u.platform.id, q.customerId);
    if (!customer) throw errors.customerNotFound(q.customerId);
    if (customer.deleted_at) throw errors.payerDeleted(q.customerId);
  }
  if (q.senderUmaAddress !== undefined) {
    const address = q.senderUmaAddress.toLowerCase();
    if (customer) {
      if (customer.uma_address !== address) throw lookupErrors.sendersDisagree(customer.id, q.senderUmaAddress);
    } else {
      customer = await findActiveByUmaAddress(u.trx, u.platform.id, address);
      if (!customer) throw lookupErrors.senderUmaUnknown(q.senderUmaAddress);
    }
  }
  if (!customer) throw lookupErrors.senderMissing();
  const held = JSON.parse(customer.currencies) as string[];
  return { customerId: customer.id, currency: held[0] ?? u.platform.fiat_currency };
}

/** Prices the receiver's currencies for the sender and records the lookup; returns the shared part of the answer. */
async function record(
  u: Unit,
  kind: LookupReceiverKind,
  receiver: string,
  sender: Sender,
  currencies: string[],
  fields: readonly CounterpartyFieldWire[],
): Promise<{ supportedCurrencies: CurrencyPreferenceWire[]; requiredPayerDataFields: CounterpartyFieldWire[]; lookupId: string }> {
  const limits = sendingLimits(settingsOf(u.platform), sender.currency);
  const supportedCurrencies = currencies.map((code) => preference(sender.currency, code, limits, u.nowMs));
  const row: LookupRow = {
    id: u.deps.ids.next('Lookup'),
    platform_id: u.platform.id,
    receiver_kind: kind,
    receiver,
    sender_customer_id: sender.customerId,
    sending_currency: sender.currency,
    currencies: JSON.stringify(currencies),
    required_payer_fields: JSON.stringify(fields),
    created_at: u.at,
    expires_at: iso(u.nowMs + LOOKUP_TTL_MS),
  };
  await pruneExpiredLookups(u.trx, u.platform.id, u.at);
  await insertLookup(u.trx, row);
  return { supportedCurrencies, requiredPayerDataFields: [...fields], lookupId: row.id };
}

/**
 * One receivable currency: the sandbox rate a quote made now would use (receiving smallest units per
 * sending smallest unit), and the platform's per-payment sending bounds in the sender's currency
 * converted to it (min rounded up, max down, at least 1, at most 2^53−1).
 */
function preference(from: string, to: string, limits: { min: number; max: number }, nowMs: number): CurrencyPreferenceWire {
  const rate = sandboxRate(from, to, nowMs);
  const min = Math.max(1, cappedAmount(applyRate(limits.min, rate, 'ceil')));
  const max = Math.max(min, cappedAmount(applyRate(limits.max, rate, 'floor')));
  return { currency: currency(to), estimatedExchangeRate: rate.value, min, max };
}

// ---------------------------------------------------------------------------------------------
// POST /quotes with a lookupId

/** What a quote being created shows of itself to its lookup. */
export interface QuoteForLookup {
  lookupId: string;
  /** The quote's sender: the customer its source resolved to (null: the platform itself). */
  senderCustomerId: string | null;
  destination: Pick<ResolvedDestination, 'accountId' | 'wire'>;
  senderCustomerInfo: Record<string, string> | undefined;
}

/**
 * Checks a quote against the lookup it names, in the quote's unit: the lookup must be this
 * platform's and unexpired (else 404 `LOOKUP_REQUEST_NOT_FOUND`), made for the quote's receiver and
 * sender (else 400 naming `lookupId`), and every mandatory payer field it listed must be in
 * `senderCustomerInfo` (else 400 `MISSING_MANDATORY_USER_INFO` naming each). A lookup may serve
 * several quotes while it lasts.
 */
export async function honourLookup(u: Unit, q: QuoteForLookup): Promise<void> {
  const lookup = await findLookup(u.trx, u.platform.id, q.lookupId);
  if (!lookup) throw lookupErrors.lookupNotFound(q.lookupId);
  if (u.nowMs >= Date.parse(lookup.expires_at)) throw lookupErrors.lookupNotFound(q.lookupId, lookup.expires_at);
  if (!sameReceiver(lookup, q.destination)) throw lookupErrors.lookupOtherReceiver(lookup.id, lookup.receiver);
  if (q.senderCustomerId !== lookup.sender_customer_id) throw lookupErrors.lookupOtherSender(lookup.id, lookup.sender_customer_id);
  checkPayerData(lookup, q.senderCustomerInfo ?? {});
}

function sameReceiver(lookup: LookupRow, d: QuoteForLookup['destination']): boolean {
  const kind = d.wire.destinationType === 'UMA_ADDRESS' ? 'UMA_ADDRESS' : 'EXTERNAL_ACCOUNT';
  return lookup.receiver_kind === kind && lookup.receiver === d.accountId;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function checkPayerData(lookup: LookupRow, info: Record<string, string>): void {
  const fields = JSON.parse(lookup.required_payer_fields) as CounterpartyFieldWire[];
  const missing = fields.filter((f) => f.mandatory && (info[f.name] ?? '').trim() === '').map((f) => f.name);
  if (missing.length > 0) throw lookupErrors.payerDataMissing(lookup.id, missing);
  const birthDate = info.BIRTH_DATE;
  if (birthDate !== undefined && fields.some((f) => f.name === 'BIRTH_DATE') && !isCalendarDate(birthDate)) {
    throw lookupErrors.payerDataInvalid('BIRTH_DATE', 'must be a date, YYYY-MM-DD');
  }
}

function isCalendarDate(text: string): boolean {
  const m = DATE.exec(text);
  if (!m) return false;
  const d = new Date(`${text}T00:00:00Z`);
  return (
    !Number.isNaN(d.getTime()) &&
    d.getUTCFullYear() === Number(m[1]) &&
    d.getUTCMonth() + 1 === Number(m[2]) &&
    d.getUTCDate() === Number(m[3])
  );
}
