/**
 * Customers: creation (with their internal accounts), partial update, soft delete, the wire shape,
 * and KYC/KYB status changes with their CUSTOMER.* events.
 *
 * Rules:
 * - `platformCustomerId` and `umaAddress` are unique per platform among non-deleted customers
 *   (409 CONFLICT / 409 UMA_ADDRESS_EXISTS); a deleted customer frees both.
 * - UMA addresses are `$user@<platform umaDomain>`, lowercase, user part (with `$`) ≤ 64 characters
 *   of `a-z0-9-_.+`; anything else is 400 INVALID_UMA_ADDRESS. Absent → generated from
 *   `platformCustomerId`.
 * - `currencies` must all be platform-supported (400 INVALID_CURRENCY); absent → every currency the
 *   platform supports. Each currency gets a holding account; when the platform supports USDB the
 *   customer also gets an EMBEDDED_WALLET in USDB (which is then its USDB account).
 * - Individual `kycStatus` at creation: sandbox platforms follow the `fullName` suffix table;
 *   production platforms start APPROVED when regulated, UNVERIFIED otherwise. Business customers
 *   always start `kybStatus` UNVERIFIED.
 * - A business on the wire carries its beneficial owners (`beneficialOwners`, oldest first, `[]`
 *   when it has none), read in one query for any number of customers (a list page, an event).
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { type ApiError, errors } from '../../http/errors.ts';
import type { WalletSignature } from '../../http/wallet-signature.ts';
import { type Page, type PageRequest, pageOf } from '../../lib/paging.ts';
import type { LockOptions } from '../../store/row-lock.ts';
import type { CustomerRow, Database, PlatformRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import type { WebhookType } from '../../webhook-delivery/catalogue.ts';
import type { Signed } from '../auth/signed-retry.ts';
import { authorizeContactChange } from '../contact-verification/contact-change.service.ts';
import type { ContactVerificationWire } from '../contact-verification/contact-verification.schemas.ts';
import { contactVerificationsOf, contactVerificationWire } from '../contact-verification/contact-verification.status.ts';
import { findCustomerAccounts } from '../internal-accounts/internal-accounts.repo.ts';
import { createInternalAccount, holdingTypeFor } from '../internal-accounts/internal-accounts.service.ts';
import { beneficialOwnersOfCustomers } from '../kyc/beneficial-owners.repo.ts';
import type { BeneficialOwnerWire } from '../kyc/beneficial-owners.schemas.ts';
import { beneficialOwnerToWire } from '../kyc/beneficial-owners.wire.ts';
import { settingsOf } from '../platforms/platform-settings.ts';
import {
  type CustomerFilter,
  findActiveByPlatformCustomerId,
  findActiveByUmaAddress,
  findCustomer,
  insertCustomer,
  listCustomers as listCustomerRows,
  uniqueViolationOf,
  updateActiveCustomer,
} from './customers.repo.ts';
import type {
  BusinessCustomerCreate,
  BusinessInfoUpdate,
  CustomerCreate,
  CustomerUpdate,
  CustomerWire,
  IndividualCustomerCreate,
  VerificationStatus,
} from './customers.schemas.ts';
import {
  businessProblems,
  checkCurrencies,
  checkTermsVersion,
  individualProblems,
  normalizeUmaAddress,
  throwProblems,
  withIssuanceDefault,
} from './customers.validation.ts';

export { END_USER_TERMS, normalizeUmaAddress } from './customers.validation.ts';

/** The embedded-wallet asset: a platform supporting it gives every customer an EMBEDDED_WALLET in it. */
export const WALLET_CURRENCY = 'USDB';

type BaseKeys = 'customerType' | 'platformCustomerId' | 'region' | 'currencies' | 'umaAddress';

/** What the `data` column holds: contact details, consent and the type-specific fields. */
export type CustomerData = Omit<IndividualCustomerCreate, BaseKeys> & { businessInfo?: BusinessInfoUpdate };

export function parseCustomerData(row: CustomerRow): CustomerData {
  return JSON.parse(row.data) as CustomerData;
}

export function customerCurrencies(row: CustomerRow): string[] {
  return JSON.parse(row.currencies) as string[];
}

/** The customer's own name (fullName or the business's legal name), when it has one. */
export function customerName(row: CustomerRow): string | undefined {
  const d = parseCustomerData(row);
  return row.customer_type === 'BUSINESS' ? d.businessInfo?.legalName : d.fullName;
}

/** The account-holder name on a customer account's funding instructions. */
export function customerHolderName(row: CustomerRow, platformName: string): string {
  return customerName(row) ?? platformName;
}

/** A customer's beneficial owners on the wire, oldest first (an individual has none). */
export type CustomerOwners = readonly BeneficialOwnerWire[];

/** The beneficial owners of the business customers among `rows`, by customer id: one query, none when no row is a business. */
async function ownersOfCustomers(
  db: Kysely<Database>,
  platformId: string,
  rows: readonly CustomerRow[],
): Promise<Map<string, BeneficialOwnerWire[]>> {
  const businessIds = rows.filter((r) => r.customer_type === 'BUSINESS').map((r) => r.id);
  const out = new Map<string, BeneficialOwnerWire[]>();
  for (const o of await beneficialOwnersOfCustomers(db, platformId, businessIds)) {
    const list = out.get(o.customer_id);
    if (list) list.push(beneficialOwnerToWire(o));
    else out.set(o.customer_id, [beneficialOwnerToWire(o)]);
  }
  return out;
}

/** `body` without the verification status the live request schemas let a client send (it is ignored). */
function withoutStatus<T extends object>(body: T): T {
  if (!('kycStatus' in body) && !('kybStatus' in body)) return body;
  const { kycStatus: _kyc, kybStatus: _kyb, ...rest } = body as T & { kycStatus?: unknown; kybStatus?: unknown };
  return rest as T;
}

/**
 * One customer on the wire, its beneficial owners and contact verification read (no query for an
 * individual, none for a customer that verifies no contact).
 */
export async function customerWire(db: Kysely<Database>, platform: PlatformRow, row: CustomerRow): Promise<CustomerWire> {
  const owners = await ownersOfCustomers(db, row.platform_id, [row]);
  const contacts = await contactVerificationsOf(db, platform, [row]);
  return customerToWire(row, owners.get(row.id) ?? [], contacts.get(row.id));
}

/**
 * The customer on the wire; `owners` are its beneficial owners (ignored for an individual),
 * `contact` its contact verification (absent when it verifies nothing).
 */
export function customerToWire(row: CustomerRow, owners: CustomerOwners, contact?: ContactVerificationWire): CustomerWire {
  const { identifier: _writeOnly, ...data } = parseCustomerData(row);
  const base = {
    id: row.id,
    platformCustomerId: row.platform_customer_id,
    ...(row.region !== null ? { region: row.region } : {}),
    currencies: customerCurrencies(row),
    umaAddress: row.uma_address,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    isDeleted: row.deleted_at !== null,
    ...(contact !== undefined ? { contactVerification: contact } : {}),
  };
  if (row.customer_type === 'BUSINESS') {
    const { businessInfo, address, email, phoneNumber, endUserTermsConsent } = data;
    return {
      ...base,
      customerType: 'BUSINESS',
      kybStatus: (row.kyb_status ?? 'UNVERIFIED') as VerificationStatus,
      ...(email !== undefined ? { email } : {}),
      ...(phoneNumber !== undefined ? { phoneNumber } : {}),
      ...(endUserTermsConsent !== undefined ? { endUserTermsConsent } : {}),
      ...(address !== undefined ? { address } : {}),
      // Stored from a create request, so legalName is always present.
      ...(businessInfo !== undefined ? { businessInfo: { ...businessInfo, legalName: businessInfo.legalName ?? '' } } : {}),
      beneficialOwners: [...owners],
    };
  }
  return { ...base, ...data, customerType: 'INDIVIDUAL', kycStatus: (row.kyc_status ?? 'UNVERIFIED') as VerificationStatus };
}

/** The sandbox rule: the last three characters of `fullName` decide `kycStatus` at creation. */
export function sandboxKycStatus(fullName: string | undefined): VerificationStatus {
  switch ((fullName ?? '').slice(-3)) {
    case '001':
      return 'PENDING';
    case '002':
      return 'REJECTED';
    case '003':
      return 'UNVERIFIED';
    default:
      return 'APPROVED';
  }
}

export function initialKycStatus(platform: PlatformRow, fullName: string | undefined): VerificationStatus {
  if (platform.environment === 'SANDBOX') return sandboxKycStatus(fullName);
  return settingsOf(platform).isRegulatedFinancialInstitution ? 'APPROVED' : 'UNVERIFIED';
}

/** The CUSTOMER.* webhook type for entering `status`, if that status has one. */
export function customerStatusEventType(customerType: string, status: string): WebhookType | undefined {
  const kind = customerType === 'BUSINESS' ? 'KYB' : 'KYC';
  return status === 'PENDING' || status === 'APPROVED' || status === 'REJECTED' ? `CUSTOMER.${kind}_${status}` : undefined;
}

/**
 * Emits the CUSTOMER.* event for entering `status`, if it has one; the data is the customer as GET
 * returns it (`wire` when the caller has it already).
 */
async function emitStatusEvent(u: Unit, row: CustomerRow, status: string, wire?: CustomerWire): Promise<void> {
  const type = customerStatusEventType(row.customer_type, status);
  if (!type) return;
  u.emit(type, row.id, wire ?? (await customerWire(u.trx, u.platform, row)));
}

/**
 * The customer, for a service that acts on it: unknown (or another platform's) → 404
 * USER_NOT_FOUND, deleted → 410 CUSTOMER_DELETED. With `{ forUpdate: true }` its row stays locked
 * until the transaction ends, so writes on one customer run one after the other.
 */
export async function requireCustomer(db: Kysely<Database>, platformId: string, id: string, opts?: LockOptions): Promise<CustomerRow> {
  const row = await findCustomer(db, platformId, id, opts);
  if (!row) throw errors.customerNotFound(id);
  if (row.deleted_at !== null) throw errors.customerDeleted(id);
  return row;
}

/**
 * Sets a customer's verification status (kycStatus for individuals, kybStatus for businesses) and,
 * when it changed into PENDING, APPROVED or REJECTED, emits the matching CUSTOMER.* event. For the
 * verification flows.
 */
export async function setCustomerVerificationStatus(u: Unit, customerId: string, status: VerificationStatus): Promise<CustomerRow> {
  const row = await requireCustomer(u.trx, u.platform.id, customerId, { forUpdate: true });
  const current = row.customer_type === 'BUSINESS' ? row.kyb_status : row.kyc_status;
  if (current === status) return row;
  const set = row.customer_type === 'BUSINESS' ? { kyb_status: status } : { kyc_status: status };
  if (!(await updateActiveCustomer(u.trx, u.platform.id, row.id, { ...set, updated_at: u.at }))) throw errors.customerDeleted(customerId);
  const updated: CustomerRow = { ...row, ...set, updated_at: u.at };
  await emitStatusEvent(u, updated, status);
  return updated;
}

/** A UMA username derived from the platform's customer id (characters outside the set become `-`). */
function umaUserFrom(platformCustomerId: string): string {
  const user = platformCustomerId
    .toLowerCase()
    .replace(/[^a-z0-9\-_.+]/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-|-$/g, '');
  return (user === '' ? 'customer' : user).slice(0, 48);
}

async function generateUmaAddress(u: Unit, platformCustomerId: string, domain: string): Promise<string> {
  const user = umaUserFrom(platformCustomerId);
  let candidate = `$${user}@${domain.toLowerCase()}`;
  // A handful of attempts: a random 6-hex suffix collides with vanishing probability.
  for (let i = 0; i < 5 && (await findActiveByUmaAddress(u.trx, u.platform.id, candidate)); i++) {
    candidate = `$${user}-${u.deps.rng.bytes(3).toString('hex')}@${domain.toLowerCase()}`;
  }
  return candidate;
}

// ── accounts ──────────────────────────────────────────────────────────────────────────────────

/**
 * Gives the customer a holding account in each of `currencies` it lacks, and an EMBEDDED_WALLET
 * (USDB) when the platform supports USDB; existing accounts are kept as they are.
 */
async function ensureCustomerAccounts(u: Unit, customerId: string, currencies: string[]): Promise<void> {
  const { trx, platform, deps, at } = u;
  const existing = await findCustomerAccounts(trx, platform.id, customerId);
  const has = (type: string, currency: string) => existing.some((a) => a.type === type && a.currency === currency);
  for (const c of currencies) {
    if (c === WALLET_CURRENCY) continue; // the embedded wallet below is the customer's USDB account
    const type = holdingTypeFor(c);
    if (!has(type, c)) await createInternalAccount(trx, deps, { platformId: platform.id, customerId, type, currency: c, at });
  }
  const walletSupported = settingsOf(platform).supportedCurrencies.some((c) => c.currencyCode === WALLET_CURRENCY);
  if (walletSupported && !existing.some((a) => a.type === 'EMBEDDED_WALLET')) {
    await createInternalAccount(trx, deps, {
      platformId: platform.id,
      customerId,
      type: 'EMBEDDED_WALLET',
      currency: WALLET_CURRENCY,
      at,
    });
  }
}

function rethrowUnique(err: unknown, platformCustomerId: string, umaAddress: string): never {
  const which = uniqueViolationOf(err);
  if (which === 'umaAddress') throw errors.umaAddressExists(umaAddress);
  if (which === 'platformCustomerId') throw duplicatePlatformCustomerId(platformCustomerId);
  throw err;
}

function duplicatePlatformCustomerId(id: string): ApiError {
  return errors.conflict(`An active customer with platformCustomerId ${id} already exists`, {
    errors: [{ field: 'platformCustomerId', message: 'is already used by an active customer' }],
  });
}

// ── operations ────────────────────────────────────────────────────────────────────────────────

/** Creates the customer, its accounts and its status event. */
export async function createCustomer(u: Unit, body: CustomerCreate): Promise<CustomerWire> {
  const { trx, platform, deps, at } = u;
  const today = at.slice(0, 10);
  const settings = settingsOf(platform);
  // A verification status in the body is accepted and ignored (customers.schemas.ts, IgnoredKycStatus).
  const {
    customerType,
    platformCustomerId: givenId,
    region,
    currencies: givenCurrencies,
    umaAddress: givenUma,
    ...rest
  } = withoutStatus(body);
  let data: CustomerData;
  if (customerType === 'INDIVIDUAL') {
    data = withIssuanceDefault(rest as Omit<IndividualCustomerCreate, BaseKeys>);
    throwProblems(individualProblems(data, today));
  } else {
    data = rest as Omit<BusinessCustomerCreate, BaseKeys>;
    throwProblems(businessProblems(data.businessInfo, today));
  }
  const currencies = givenCurrencies ?? settings.supportedCurrencies.map((c) => c.currencyCode);
  checkCurrencies(platform, currencies);
  checkTermsVersion(data.endUserTermsConsent);
  const wantedUma = givenUma !== undefined ? normalizeUmaAddress(givenUma, settings.umaDomain) : undefined;
  const platformCustomerId = givenId ?? deps.rng.bytes(8).toString('hex');

  if (await findActiveByPlatformCustomerId(trx, platform.id, platformCustomerId)) throw duplicatePlatformCustomerId(platformCustomerId);
  if (wantedUma && (await findActiveByUmaAddress(trx, platform.id, wantedUma))) throw errors.umaAddressExists(wantedUma);
  const umaAddress = wantedUma ?? (await generateUmaAddress(u, platformCustomerId, settings.umaDomain));
  const status: VerificationStatus = customerType === 'INDIVIDUAL' ? initialKycStatus(platform, data.fullName) : 'UNVERIFIED';
  const row: CustomerRow = {
    id: deps.ids.next('Customer'),
    platform_id: platform.id,
    customer_type: customerType,
    platform_customer_id: platformCustomerId,
    uma_address: umaAddress,
    region: region ?? null,
    kyc_status: customerType === 'INDIVIDUAL' ? status : null,
    kyb_status: customerType === 'BUSINESS' ? status : null,
    data: JSON.stringify(data),
    currencies: JSON.stringify(currencies),
    created_at: at,
    updated_at: at,
    deleted_at: null,
  };
  try {
    await insertCustomer(trx, row);
  } catch (err) {
    rethrowUnique(err, platformCustomerId, umaAddress);
  }
  await ensureCustomerAccounts(u, row.id, currencies);
  // A new customer has no beneficial owners and no verified contact yet: nothing to read.
  const wire = customerToWire(row, [], contactVerificationWire(platform, row, []));
  await emitStatusEvent(u, row, status, wire);
  return wire;
}

/** The customer, deleted or not (a deleted one reads with `isDeleted: true`). */
export async function getCustomer(ctx: AppContext, platform: PlatformRow, id: string): Promise<CustomerWire> {
  const row = await findCustomer(ctx.db, platform.id, id);
  if (!row) throw errors.customerNotFound(id);
  return customerWire(ctx.db, platform, row);
}

/** One page of the platform's customers, newest first; the businesses' owners are read in one query for the page. */
export async function listCustomers(
  ctx: AppContext,
  platform: PlatformRow,
  filter: CustomerFilter,
  page: PageRequest,
): Promise<Page<CustomerWire>> {
  const { rows, totalCount } = await listCustomerRows(ctx.db, platform.id, filter, page.limit, page.afterId);
  const shown = rows.slice(0, page.limit);
  const owners = await ownersOfCustomers(ctx.db, platform.id, shown);
  const contacts = await contactVerificationsOf(ctx.db, platform, shown);
  return pageOf(rows, page.limit, totalCount, (r) => customerToWire(r, owners.get(r.id) ?? [], contacts.get(r.id)));
}

/**
 * Partial update: given top-level fields replace the stored ones (`address` as a whole,
 * `currencies` as a list), `businessInfo` merges field by field. New currencies get accounts.
 * A change of the email (phone number) that EMAIL_OTP (SMS_OTP) credentials of the customer's
 * embedded wallets sign in with is a signed retry: first a challenge, then — stamped by a session of
 * one of those wallets — the update together with the credentials (contact-change.service.ts).
 */
export async function updateCustomer(
  u: Unit,
  id: string,
  body: CustomerUpdate,
  signature: WalletSignature = { stamp: undefined, requestId: undefined },
): Promise<Signed<CustomerWire>> {
  const { trx, platform, at } = u;
  const settings = settingsOf(platform);
  const row = await requireCustomer(trx, platform.id, id, { forUpdate: true });
  const { customerType, currencies, umaAddress: givenUma, ...rest } = withoutStatus(body);
  if (customerType !== row.customer_type) {
    throw errors.invalidInput(`customerType: this customer is ${row.customer_type}`, [
      {
        field: 'customerType',
        message: `must be ${row.customer_type}, the type of this customer`,
        constraint: { enum: [row.customer_type] },
      },
    ]);
  }
  if (rest.email !== undefined && rest.phoneNumber !== undefined) {
    throw errors.invalidInput('email and phoneNumber must be changed in separate requests', [
      { field: 'email', message: 'cannot be changed together with phoneNumber' },
      { field: 'phoneNumber', message: 'cannot be changed together with email' },
    ]);
  }
  const before = parseCustomerData(row);
  let data: CustomerData;
  if (customerType === 'INDIVIDUAL') {
    data = withIssuanceDefault({ ...before, ...rest });
    throwProblems(individualProblems(data, at.slice(0, 10)));
  } else {
    const { businessInfo, ...top } = rest as { businessInfo?: BusinessInfoUpdate } & Partial<CustomerData>;
    data = { ...before, ...top, ...(businessInfo ? { businessInfo: { ...before.businessInfo, ...businessInfo } } : {}) };
    throwProblems(businessProblems(data.businessInfo, at.slice(0, 10)));
  }
  if (currencies) checkCurrencies(platform, currencies);
  checkTermsVersion(rest.endUserTermsConsent);
  const umaAddress = givenUma !== undefined ? normalizeUmaAddress(givenUma, settings.umaDomain) : row.uma_address;
  if (umaAddress !== row.uma_address && (await findActiveByUmaAddress(trx, platform.id, umaAddress, row.id))) {
    throw errors.umaAddressExists(umaAddress);
  }
  const contact = await authorizeContactChange(u, {
    customer: row,
    before: { email: before.email, phoneNumber: before.phoneNumber },
    after: { email: data.email, phoneNumber: data.phoneNumber },
    body,
    signature,
  });
  if (contact.kind === 'challenge') return contact;
  const updated: CustomerRow = {
    ...row,
    data: JSON.stringify(data),
    currencies: currencies ? JSON.stringify(currencies) : row.currencies,
    uma_address: umaAddress,
    updated_at: at,
  };
  // A request that changes nothing writes nothing (and so does not move updatedAt); a given
  // `currencies` still opens any account the customer lacks (e.g. the wallet once USDB is supported).
  if (updated.data === row.data && updated.currencies === row.currencies && updated.uma_address === row.uma_address) {
    if (currencies) await ensureCustomerAccounts(u, row.id, currencies);
    return { kind: 'done', value: await customerWire(trx, platform, row) };
  }
  try {
    const ok = await updateActiveCustomer(trx, platform.id, row.id, {
      data: updated.data,
      currencies: updated.currencies,
      uma_address: updated.uma_address,
      updated_at: at,
    });
    if (!ok) throw errors.customerDeleted(id); // deleted by a concurrent request
  } catch (err) {
    rethrowUnique(err, row.platform_customer_id, umaAddress);
  }
  if (currencies) await ensureCustomerAccounts(u, row.id, currencies);
  return { kind: 'done', value: await customerWire(trx, platform, updated) };
}

/** Soft delete; returns the deleted customer. A second delete is 410 CUSTOMER_DELETED. */
export async function deleteCustomer(u: Unit, id: string): Promise<CustomerWire> {
  const { trx, platform, at } = u;
  const row = await requireCustomer(trx, platform.id, id, { forUpdate: true });
  // Conditional on still being active, so two concurrent deletes give one 200 and one 410.
  if (!(await updateActiveCustomer(trx, platform.id, row.id, { deleted_at: at, updated_at: at }))) throw errors.customerDeleted(id);
  return customerWire(trx, platform, { ...row, deleted_at: at, updated_at: at });
}
