/**
 * Rows of the data set, in the formats Corridor's services write them: customers with their
 * internal and external accounts and funding entries, then transactions with their quotes and the
 * ledger entries the payment engine posts for each outcome (see src/modules/payments/payment-engine.ts).
 */
import type { Deps } from '../../src/deps.ts';
import { systemAccount, type Posting } from '../../src/ledger/ledger.ts';
import { feesFor, receivingAmount, sandboxRate, sendingForReceiving } from '../../src/lib/rates.ts';
import { iso } from '../../src/lib/time.ts';
import { END_USER_TERMS, type CustomerData } from '../../src/modules/customers/customers.service.ts';
import { withIssuanceDefault } from '../../src/modules/customers/customers.validation.ts';
import { checkAccountInfo, type AccountInfo } from '../../src/modules/external-accounts/account-info.ts';
import { clabeCheckDigit } from '../../src/modules/external-accounts/checksums.ts';
import { holdingTypeFor, newFundingReference } from '../../src/modules/internal-accounts/internal-accounts.service.ts';
import { chooseRail } from '../../src/modules/payments/parties.ts';
import { QUOTE_TTL_MS } from '../../src/modules/payments/quotes.service.ts';
import { quoteScenario, SANDBOX_UMA_RECEIVERS, transferScenario } from '../../src/modules/payments/sandbox-outcomes.ts';
import type { PlatformSettings } from '../../src/modules/platforms/platform-settings.ts';
import type { CustomerRow, ExternalAccountRow, InternalAccountRow, QuoteRow, TransactionRow } from '../../src/store/schema.ts';
import {
  CUSTOMER_CURRENCIES,
  DAY_MS,
  FEES,
  FOREIGN,
  Kind,
  KIND_NAMES,
  Status,
  type Balances,
  type CustomerPlan,
  type Plan,
} from './plan.ts';
import { uuid7, type Rand } from './random.ts';

/** Default sandbox UMA domain (config CORRIDOR_SANDBOX_UMA_DOMAIN), where the sandbox senders live. */
const SANDBOX_UMA_DOMAIN = 'sandbox.uma.money';

export interface Party {
  customerId: string;
  platformCustomerId: string;
  /** Internal account ids: [USD, EUR or ''] */
  accounts: [string, string];
  /** External accounts: US bank, IBAN (EUR holders) and the foreign payout account. */
  usBank: ExternalAccountRow;
  iban: ExternalAccountRow | undefined;
  foreign: ExternalAccountRow;
}

const FIRST = [
  'Ana',
  'Ben',
  'Chloe',
  'David',
  'Elena',
  'Farid',
  'Grace',
  'Hiro',
  'Ines',
  'Jamal',
  'Kira',
  'Luis',
  'Maya',
  'Noah',
  'Olga',
  'Priya',
  'Quinn',
  'Rosa',
  'Sam',
  'Tariq',
];
const LAST = [
  'Garcia',
  'Smith',
  'Nguyen',
  'Okafor',
  'Kowalski',
  'Rossi',
  'Silva',
  'Khan',
  'Müller',
  'Dubois',
  'Tanaka',
  'Haddad',
  'Johnson',
  'Reyes',
  'Cohen',
];
const CITIES = [
  ['Austin', 'TX', '73301'],
  ['Denver', 'CO', '80202'],
  ['Miami', 'FL', '33101'],
  ['Seattle', 'WA', '98101'],
  ['Chicago', 'IL', '60601'],
] as const;
const DESCRIPTIONS = ['Family support', 'Rent', 'Invoice payment', 'Tuition', 'Savings transfer', 'Gift'];

/** A German IBAN whose account number ends in 001 (valid mod-97 check digits). */
function germanIban(r: Rand): string {
  const bban = `${r.digits(8)}${r.digits(7)}001`;
  // Check digits: (BBAN + "DE00" with D=13, E=14) mod 97, subtracted from 98.
  let rem = 0;
  for (const ch of `${bban}131400`) rem = (rem * 10 + (ch.charCodeAt(0) - 48)) % 97;
  return `DE${String(98 - rem).padStart(2, '0')}${bban}`;
}

/** A CLABE whose sandbox suffix (last 3 digits, check digit included) is no magic value. */
function clabe(r: Rand): string {
  for (;;) {
    const first = `012180${r.digits(11)}`;
    const v = `${first}${clabeCheckDigit(first)}`;
    if (!/(00[2-7]|10[2-7])$/.test(v)) return v;
  }
}

function foreignAccountInfo(code: (typeof FOREIGN)[number], r: Rand): AccountInfo {
  switch (code) {
    case 'MXN':
      return { accountType: 'MXN_ACCOUNT', clabeNumber: clabe(r) };
    case 'GBP':
      return { accountType: 'GBP_ACCOUNT', sortCode: r.digits(6), accountNumber: `${r.digits(5)}001` };
    case 'PHP':
      return { accountType: 'PHP_ACCOUNT', bankName: 'BDO Unibank', accountNumber: `${r.digits(9)}001` };
    case 'CAD':
      return { accountType: 'CAD_ACCOUNT', bankCode: r.digits(3), branchCode: r.digits(5), accountNumber: `${r.digits(6)}001` };
  }
}

/** An external account row as createExternalAccount writes it (sandbox: verification MATCHED). */
function externalAccount(
  platformId: string,
  customerId: string,
  currency: string,
  input: AccountInfo,
  name: string,
  at: string,
  r: Rand,
  createdMs: number,
): ExternalAccountRow {
  const checked = checkAccountInfo(input, currency);
  return {
    id: `ExternalAccount:${uuid7(createdMs, r)}`,
    platform_id: platformId,
    customer_id: customerId,
    status: 'ACTIVE',
    currency,
    account_type: checked.info.accountType,
    account_info: JSON.stringify(checked.info),
    identifier: checked.identifier,
    identity_key: `${customerId}|${checked.identityKey}`,
    platform_account_id: null,
    ownership_type: null,
    default_uma_deposit: 0,
    beneficiary_verification_status: 'MATCHED',
    beneficiary_verified_name: name,
    created_at: at,
    updated_at: at,
    deleted_at: null,
  };
}

export interface GenContext {
  platformId: string;
  settings: PlatformSettings;
  platformAccounts: Record<string, string>;
  r: Rand;
  deps: Deps;
  endMs: number;
}

export function internalAccountRow(
  platformId: string,
  customerId: string | null,
  currency: string,
  at: string,
  deps: Deps,
  r: Rand,
  ms: number,
): InternalAccountRow {
  return {
    id: `InternalAccount:${uuid7(ms, r)}`,
    platform_id: platformId,
    customer_id: customerId,
    type: holdingTypeFor(currency),
    status: 'ACTIVE',
    currency,
    available: 0,
    pending: 0,
    funding_reference: newFundingReference(deps),
    private_enabled: null,
    created_at: at,
    updated_at: at,
  };
}

export type Tables = Map<string, object[]>;

function newTables(...names: string[]): Tables {
  return new Map(names.map((n) => [n, []]));
}

function ledger(ctx: GenContext, out: Tables, kind: string, referenceId: string, ms: number, list: Posting[]): void {
  const id = `LedgerEntry:${uuid7(ms, ctx.r)}`;
  const at = iso(ms);
  out.get('ledger_entries')!.push({ id, platform_id: ctx.platformId, kind, reference_id: referenceId, created_at: at });
  const rows = out.get('ledger_postings')!;
  list.forEach((p, seq) => {
    rows.push({
      entry_id: id,
      seq,
      platform_id: ctx.platformId,
      account_id: p.accountId,
      currency: p.currency,
      bucket: p.bucket,
      amount: p.amount,
      created_at: at,
    });
  });
}

/** Customers [from, to): their rows, internal accounts (final balances), external accounts and funding entries. */
export function writeCustomers(ctx: GenContext, c: CustomerPlan, b: Balances, from: number, to: number, parties: Party[]): Tables {
  const out = newTables('customers', 'internal_accounts', 'external_accounts', 'ledger_entries', 'ledger_postings');
  const { r, platformId } = ctx;
  const issuer = systemAccount(platformId, 'SANDBOX_ISSUER');
  for (let i = from; i < to; i++) {
    const ms = c.createdMs[i]!;
    const at = iso(ms);
    const pcid = `cust-${String(i + 1).padStart(7, '0')}`;
    const fullName = `${r.pick(FIRST)} ${r.pick(LAST)}`;
    const [city, state, postalCode] = r.pick(CITIES);
    const address = { line1: `${1 + r.int(9000)} Main St`, city, state, postalCode, country: 'US' };
    const birthDate = `${1950 + r.int(50)}-${String(1 + r.int(12)).padStart(2, '0')}-${String(1 + r.int(28)).padStart(2, '0')}`;
    const currencies = c.holdsEur[i] ? ['USD', 'EUR'] : ['USD'];
    const data: CustomerData = withIssuanceDefault({
      fullName,
      birthDate,
      nationality: 'US',
      address,
      email: `${pcid}@example.com`,
      endUserTermsConsent: {
        acceptedAt: at,
        ipAddress: `198.51.100.${1 + r.int(254)}`,
        termsVersion: END_USER_TERMS.version,
        acceptanceMethod: 'CHECKBOX',
      },
    });
    const customer: CustomerRow = {
      id: `Customer:${uuid7(ms, r)}`,
      platform_id: platformId,
      customer_type: 'INDIVIDUAL',
      platform_customer_id: pcid,
      uma_address: `$${pcid}@${ctx.settings.umaDomain}`,
      region: 'US',
      kyc_status: 'APPROVED',
      kyb_status: null,
      data: JSON.stringify(data),
      currencies: JSON.stringify(currencies),
      created_at: at,
      updated_at: at,
      deleted_at: null,
    };
    out.get('customers')!.push(customer);
    const accounts: [string, string] = ['', ''];
    currencies.forEach((cur, k) => {
      const slot = i * 2 + k;
      const row = internalAccountRow(platformId, customer.id, cur, at, ctx.deps, r, ms);
      const fundedMs = ms + 60_000 + r.int(DAY_MS);
      row.available = b.available[slot]!;
      row.pending = b.pending[slot]!;
      row.updated_at = iso(fundedMs);
      accounts[k] = row.id;
      out.get('internal_accounts')!.push(row);
      ledger(ctx, out, 'SANDBOX_FUNDING', row.id, fundedMs, [
        { accountId: issuer, currency: cur, bucket: 'AVAILABLE', amount: -b.funding[slot]! },
        { accountId: row.id, currency: cur, bucket: 'AVAILABLE', amount: b.funding[slot]! },
      ]);
    });
    const beneficiary = { beneficiaryType: 'INDIVIDUAL', fullName, birthDate, nationality: 'US', countryOfResidence: 'US', address };
    const ext = (cur: string, info: AccountInfo) =>
      externalAccount(platformId, customer.id, cur, { ...info, beneficiary }, fullName, at, r, ms);
    const usBank = ext('USD', {
      accountType: 'US_ACCOUNT',
      accountNumber: `${r.digits(7)}001`,
      routingNumber: '021000021',
      bankAccountType: 'CHECKING',
    });
    const iban = c.holdsEur[i] ? ext('EUR', { accountType: 'EUR_ACCOUNT', iban: germanIban(r) }) : undefined;
    const code = FOREIGN[c.foreign[i]!]!;
    const foreign = ext(code, foreignAccountInfo(code, r));
    out.get('external_accounts')!.push(...(iban ? [usBank, iban, foreign] : [usBank, foreign]));
    parties[i] = { customerId: customer.id, platformCustomerId: pcid, accounts, usBank, iban, foreign };
  }
  return out;
}

const railCache = new WeakMap<ExternalAccountRow, string | null>();
function railOf(ext: ExternalAccountRow): string | null {
  let rail = railCache.get(ext);
  if (rail === undefined) {
    rail = chooseRail(ext, undefined, 'destination.accountId');
    railCache.set(ext, rail);
  }
  return rail;
}

/** Transactions [from, to) in time order, with their quotes and ledger entries. */
export function writeTransactions(ctx: GenContext, p: Plan, parties: Party[], from: number, to: number): Tables {
  const out = newTables('transactions', 'quotes', 'ledger_entries', 'ledger_postings');
  const { r, platformId } = ctx;
  const clearingAccount = systemAccount(platformId, 'RAIL_CLEARING');
  const clearing = (currency: string, amount: number): Posting => ({ accountId: clearingAccount, currency, bucket: 'AVAILABLE', amount });
  for (let i = from; i < to; i++) {
    const ms = p.atMs[i]!;
    const at = iso(ms);
    const party = parties[p.customer[i]!]!;
    const curIdx = p.cur[i]!;
    const cur = CUSTOMER_CURRENCIES[curIdx]!;
    const account = party.accounts[curIdx]!;
    const kind = p.kind[i]! as Kind;
    const status = p.status[i]! as Status;
    const a = p.amount[i]!;
    const id = `Transaction:${uuid7(ms, r)}`;
    const reference = newFundingReference(ctx.deps);
    // When the outcome arrived: seconds to an hour later (never past the data set's end).
    const doneMs = Math.min(ctx.endMs - 1, ms + 1_000 + r.int(3_600_000));
    const t: TransactionRow = {
      id,
      platform_id: platformId,
      customer_id: party.customerId,
      platform_customer_id: party.platformCustomerId,
      type: 'OUTGOING',
      direction: 'DEBIT',
      status: 'COMPLETED',
      kind: KIND_NAMES[kind],
      source: '',
      destination: '',
      sender_account_id: account,
      receiver_account_id: null,
      internal_account_id: account,
      sent_amount: a,
      sent_currency: cur,
      received_amount: a,
      received_currency: cur,
      fees: 0,
      platform_fees: 0,
      exchange_rate: '1',
      quote_id: null,
      description: null,
      reference,
      payment_rail: null,
      scenario: '',
      failure_reason: null,
      refund: null,
      settled_at: null,
      receipt_delivery_confirmed_at: null,
      extra: null,
      created_at: at,
      updated_at: at,
    };
    const accountWire = { sourceType: 'ACCOUNT', accountId: account, currency: cur };
    if (kind === Kind.TransferOut || kind === Kind.Quote) {
      const dest = kind === Kind.TransferOut ? (curIdx === 0 ? party.usBank : party.iban!) : party.foreign;
      t.source = JSON.stringify(accountWire);
      t.destination = JSON.stringify({ destinationType: 'ACCOUNT', accountId: dest.id, currency: dest.currency });
      t.receiver_account_id = dest.id;
      t.received_currency = dest.currency;
      t.payment_rail = railOf(dest);
      const failed = status === Status.Failed;
      if (kind === Kind.TransferOut) {
        t.scenario = JSON.stringify(transferScenario(failed ? '004' : '001', false));
        if (status === Status.InFlight) t.status = 'PENDING';
      } else {
        const rate = sandboxRate(cur, dest.currency, ms);
        const f = FEES[cur];
        const fees = feesFor(a, { variableFeeBps: f.bps, fixedFee: f.fixed });
        t.received_amount = Number(receivingAmount(a, fees, rate));
        t.fees = t.platform_fees = Number(fees.total);
        t.exchange_rate = rate.text;
        t.quote_id = `Quote:${uuid7(ms, r)}`;
        t.description = r.next() < 0.3 ? r.pick(DESCRIPTIONS) : null;
        t.scenario = JSON.stringify(quoteScenario(failed ? '002' : '001'));
        if (status === Status.InFlight) t.status = 'PROCESSING';
      }
      if (status === Status.Expired) {
        t.status = 'EXPIRED';
        t.failure_reason = 'QUOTE_EXPIRED';
        t.updated_at = iso(Math.min(ctx.endMs - 1, ms + QUOTE_TTL_MS));
      } else {
        const held: Posting = { accountId: account, currency: cur, bucket: 'PENDING', amount: a };
        ledger(ctx, out, 'PAYMENT_HOLD', id, ms, [{ accountId: account, currency: cur, bucket: 'AVAILABLE', amount: -a }, held]);
        if (status === Status.Completed) {
          const settle: Posting[] = [{ ...held, amount: -a }, clearing(cur, a - Number(t.fees))];
          if (Number(t.fees) > 0)
            settle.push({ accountId: ctx.platformAccounts[cur]!, currency: cur, bucket: 'AVAILABLE', amount: Number(t.fees) });
          ledger(ctx, out, 'PAYMENT_SETTLEMENT', id, doneMs, settle);
          t.settled_at = t.updated_at = iso(doneMs);
        } else if (failed) {
          ledger(ctx, out, 'PAYMENT_REFUND', id, doneMs, [
            { ...held, amount: -a },
            { accountId: account, currency: cur, bucket: 'AVAILABLE', amount: a },
          ]);
          const doneAt = iso(doneMs);
          t.status = 'FAILED';
          t.failure_reason = kind === Kind.Quote ? 'QUOTE_EXECUTION_FAILED' : 'ACCOUNT_CANNOT_RECEIVE';
          t.refund = JSON.stringify({
            reference: `${reference}-REFUND`,
            initiatedAt: doneAt,
            status: 'COMPLETED',
            reason: 'TRANSACTION_FAILED',
            settledAt: doneAt,
          });
          t.updated_at = doneAt;
        }
      }
      if (kind === Kind.Quote) out.get('quotes')!.push(quoteRow(t, account, dest.id, ms));
    } else if (kind === Kind.TransferIn) {
      const src = party.usBank;
      Object.assign(t, {
        type: 'INCOMING',
        source: JSON.stringify({ sourceType: 'ACCOUNT', accountId: src.id, currency: src.currency }),
        destination: JSON.stringify({ destinationType: 'ACCOUNT', accountId: account, currency: cur }),
        sender_account_id: src.id,
        receiver_account_id: account,
        payment_rail: 'ACH',
        scenario: JSON.stringify(transferScenario(status === Status.Failed ? '002' : '001', true)),
      });
      if (status === Status.Failed) {
        // A pull the bank refuses at once (within the request) never credits anything.
        t.status = 'FAILED';
        t.failure_reason = 'COLLECTION_FAILED';
      } else {
        ledger(ctx, out, 'INCOMING_PENDING', id, ms, [
          clearing(cur, -a),
          { accountId: account, currency: cur, bucket: 'PENDING', amount: a },
        ]);
        if (status === Status.InFlight) {
          t.status = 'PENDING';
        } else {
          ledger(ctx, out, 'INCOMING_SETTLEMENT', id, doneMs, [
            { accountId: account, currency: cur, bucket: 'PENDING', amount: -a },
            { accountId: account, currency: cur, bucket: 'AVAILABLE', amount: a },
          ]);
          t.settled_at = t.updated_at = iso(doneMs);
        }
      }
    } else {
      const failed = status === Status.Failed;
      const senderName = failed
        ? '$fail.compliance.usd'
        : cur === 'EUR'
          ? '$success.eur'
          : r.pick(['$success.usd', '$success.usd', '$success.mxn', '$success.eur']);
      const sender = SANDBOX_UMA_RECEIVERS[senderName]!;
      const senderUma = `${senderName}@${SANDBOX_UMA_DOMAIN}`;
      const rate = sandboxRate(sender.currency, cur, ms);
      Object.assign(t, {
        type: 'INCOMING',
        direction: 'CREDIT',
        source: JSON.stringify({ sourceType: 'UMA_ADDRESS', umaAddress: senderUma, currency: sender.currency }),
        destination: JSON.stringify({ destinationType: 'ACCOUNT', accountId: account, currency: cur }),
        sender_account_id: senderUma,
        receiver_account_id: account,
        sent_amount: Number(sendingForReceiving(a, rate)),
        sent_currency: sender.currency,
        exchange_rate: rate.text,
        scenario: JSON.stringify(sender.scenario),
        extra: JSON.stringify({ awaitingApproval: false }),
      });
      if (failed) {
        t.status = 'FAILED';
        t.failure_reason = 'COMPLIANCE_REJECTED';
      } else {
        ledger(ctx, out, 'INCOMING_SETTLEMENT', id, ms, [
          clearing(cur, -a),
          { accountId: account, currency: cur, bucket: 'AVAILABLE', amount: a },
        ]);
        t.settled_at = at;
      }
    }
    out.get('transactions')!.push(t);
  }
  return out;
}

/** The quote behind a QUOTE transaction, as createQuote writes it (locked on the sending side). */
function quoteRow(t: TransactionRow, accountId: string, destinationId: string, ms: number): QuoteRow {
  return {
    id: t.quote_id!,
    platform_id: t.platform_id,
    customer_id: t.customer_id,
    // A quote ends as its transaction does (PROCESSING, COMPLETED, FAILED, EXPIRED).
    status: t.status,
    transaction_id: t.id,
    source: JSON.stringify({ sourceType: 'ACCOUNT', accountId }),
    destination: JSON.stringify({ destinationType: 'ACCOUNT', accountId: destinationId }),
    sending_currency: t.sent_currency,
    receiving_currency: t.received_currency,
    locked_side: 'SENDING',
    locked_amount: t.sent_amount,
    total_sending_amount: t.sent_amount,
    total_receiving_amount: t.received_amount,
    exchange_rate: t.exchange_rate,
    fees_included: t.fees,
    platform_fees_included: t.platform_fees,
    description: t.description,
    payment_instructions: null,
    funding_reference: null,
    expires_at: iso(ms + QUOTE_TTL_MS),
    created_at: t.created_at,
    updated_at: t.updated_at,
  };
}
