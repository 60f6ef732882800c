/**
 * External accounts: creation (validation, sandbox beneficiary verification, duplicate detection),
 * soft deletion with its EXTERNAL_ACCOUNT.STATUS_UPDATED event, the wire shape, and the sandbox
 * suffix other modules steer transfer outcomes with.
 *
 * Rules (product decisions; the live API leaves them open):
 * - Scope: the customer routes see every external account of the platform (their list can be
 *   narrowed to one customer); the platform routes see platform-owned accounts only. Creating on
 *   the customer route without `customerId` makes a platform account, as the live API does.
 * - `customerId` must name a customer of the calling platform: unknown (or another platform's)
 *   → 404 USER_NOT_FOUND; deleted → 410 CUSTOMER_DELETED (what the customer routes answer too).
 * - Duplicates: one owner (customer, or the platform) cannot hold two live accounts of the same
 *   canonical accountType and currency with the same identifying fields (e.g. routing + account
 *   number, IBAN, sort code + account number, wallet address; case-insensitive where the format
 *   is). The second create is 409 CONFLICT with `details.externalAccountId` of the first. Other
 *   owners may register the same account; a deleted account frees its identity.
 * - Accounts are created ACTIVE, except FIRST_PARTY self-custody wallets, which await their
 *   ownership verification (PENDING_OWNERSHIP_VERIFICATION; src/modules/ownership/ moves them on
 *   with `setExternalAccountStatus`). Sandbox platforms get `beneficiaryVerificationStatus` from
 *   the last 3 digits of the primary identifier (102 NOT_MATCHED, 103 PARTIAL_MATCH, 104 PENDING,
 *   105 → 400 INVALID_BANK_ACCOUNT, 106 UNSUPPORTED, 107 CHECKED_BY_RECEIVING_FI, else MATCHED);
 *   production platforms carry no verification result (no rail was asked).
 * - Delete is soft: the account disappears from reads and lists, its status becomes INACTIVE and
 *   one EXTERNAL_ACCOUNT.STATUS_UPDATED event carries it. Creation emits no event (the 201 is the
 *   notice); every later status change does.
 */
import type { AppContext } from '../../context.ts';
import { errors } from '../../http/errors.ts';
import type { ExternalAccountRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { requireCustomer } from '../customers/customers.service.ts';
import { initialExternalAccountStatus } from '../ownership/ownership.rules.ts';
import { assertNotTrustedBeneficiary } from '../sca/sca-challenges.ts';
import { checkAccountInfo, suffixOf, type AccountInfo } from './account-info.ts';
import { beneficiaryName } from './beneficiary.ts';
import {
  clearDefaultUmaDeposit,
  findByIdentity,
  findExternalAccount,
  insertExternalAccount,
  softDeleteExternalAccount,
  updateExternalAccountStatus,
} from './external-accounts.repo.ts';
import type { BeneficiaryVerificationStatus, ExternalAccountStatus, ExternalAccountWire } from './external-accounts.schemas.ts';

export type { ExternalAccountWire };

export interface ExternalAccountInput {
  customerId?: string | undefined;
  currency: string;
  platformAccountId?: string | undefined;
  ownershipType?: 'FIRST_PARTY' | 'THIRD_PARTY' | undefined;
  defaultUmaDepositAccount?: boolean | undefined;
  accountInfo: AccountInfo;
}

/** Sandbox beneficiary-verification outcomes by suffix (105 is refused before this table). */
const VERIFICATION_BY_SUFFIX: Record<string, BeneficiaryVerificationStatus> = {
  '102': 'NOT_MATCHED',
  '103': 'PARTIAL_MATCH',
  '104': 'PENDING',
  '106': 'UNSUPPORTED',
  '107': 'CHECKED_BY_RECEIVING_FI',
};

/** The name the simulated rail reports back for each outcome that reports one. */
function verifiedName(status: BeneficiaryVerificationStatus, name: string | undefined): string | null {
  if (name === undefined) return null;
  if (status === 'MATCHED') return name;
  if (status === 'PARTIAL_MATCH') {
    const words = name.trim().split(/\s+/);
    return words.length >= 2 ? `${words[0]!.charAt(0)}. ${words[words.length - 1]}` : name.toUpperCase();
  }
  if (status === 'NOT_MATCHED') return 'Sandbox Account Holder';
  return null;
}

/**
 * The sandbox suffix of an external account: the last 3 digits of its primary identifier (for an
 * identifier with a domain part, of the part before `@`); '' when it does not end in 3 digits,
 * which every magic-value table treats as "any other".
 */
export function sandboxSuffix(account: Pick<ExternalAccountRow, 'identifier'>): string {
  return suffixOf(account.identifier);
}

/** Registers an external account of a customer (`customerId`) or of the platform itself. */
export async function createExternalAccount(u: Unit, input: ExternalAccountInput): Promise<ExternalAccountWire> {
  const { trx, platform, at } = u;
  const customerId = input.customerId;
  if (customerId === undefined && input.defaultUmaDepositAccount === true) {
    throw errors.invalidField('defaultUmaDepositAccount', 'applies to customer accounts only; give customerId');
  }
  const checked = checkAccountInfo(input.accountInfo, input.currency);
  const identityKey = `${customerId ?? 'PLATFORM'}|${checked.identityKey}`;
  // Locked: the customer's default UMA deposit account changes one create at a time.
  if (customerId !== undefined) await requireCustomer(trx, platform.id, customerId, { forUpdate: true });
  let verification: BeneficiaryVerificationStatus | null = null;
  if (platform.environment === 'SANDBOX') {
    const suffix = suffixOf(checked.identifier);
    if (suffix === '105') {
      throw errors.invalidBankAccount(
        `The receiving institution reports ${checked.identifierField} as an invalid account (sandbox suffix 105)`,
        `accountInfo.${checked.identifierField}`,
      );
    }
    verification = VERIFICATION_BY_SUFFIX[suffix] ?? 'MATCHED';
  }
  const existing = await findByIdentity(trx, platform.id, identityKey);
  if (existing) throw duplicate(existing.id);
  const isDefault = customerId !== undefined ? input.defaultUmaDepositAccount === true : null;
  if (isDefault && customerId !== undefined) await clearDefaultUmaDeposit(trx, platform.id, customerId, at);
  const row: ExternalAccountRow = {
    id: u.deps.ids.next('ExternalAccount'),
    platform_id: platform.id,
    customer_id: customerId ?? null,
    status: initialExternalAccountStatus({
      accountType: checked.info.accountType,
      vaspName: checked.info.vaspName,
      ownershipType: input.ownershipType,
    }),
    currency: input.currency,
    account_type: checked.info.accountType,
    account_info: JSON.stringify(checked.info),
    identifier: checked.identifier,
    identity_key: identityKey,
    platform_account_id: input.platformAccountId ?? null,
    ownership_type: input.ownershipType ?? null,
    default_uma_deposit: isDefault === null ? null : isDefault ? 1 : 0,
    beneficiary_verification_status: verification,
    beneficiary_verified_name: verification ? verifiedName(verification, beneficiaryName(checked.info.beneficiary)) : null,
    created_at: at,
    updated_at: at,
    deleted_at: null,
  };
  // A concurrent create of the same account may have won past the check above.
  if (!(await insertExternalAccount(trx, row))) throw duplicate((await findByIdentity(trx, platform.id, identityKey))?.id);
  return externalAccountToWire(row);
}

function duplicate(existingId: string | undefined) {
  return errors.conflict(
    `An external account with these details already exists${existingId ? `: ${existingId}` : ''}`,
    existingId ? { externalAccountId: existingId } : undefined,
  );
}

/** A live account of this platform; 'platform' scope finds platform-owned accounts only. */
export async function getExternalAccount(
  ctx: AppContext,
  platformId: string,
  id: string,
  scope: 'any' | 'platform',
): Promise<ExternalAccountRow> {
  const row = await findExternalAccount(ctx.db, platformId, id, scope);
  if (!row) throw errors.notFound('External account', id);
  return row;
}

/** Soft-deletes the account and emits EXTERNAL_ACCOUNT.STATUS_UPDATED (status INACTIVE). */
export async function deleteExternalAccount(u: Unit, id: string, scope: 'any' | 'platform'): Promise<void> {
  const { trx, platform, at } = u;
  const row = await findExternalAccount(trx, platform.id, id, scope);
  if (row) await assertNotTrustedBeneficiary(trx, platform.id, id);
  if (!row || !(await softDeleteExternalAccount(trx, platform.id, id, at))) throw errors.notFound('External account', id);
  const deleted: ExternalAccountRow = {
    ...row,
    status: 'INACTIVE',
    default_uma_deposit: row.customer_id === null ? null : 0,
    updated_at: at,
    deleted_at: at,
  };
  u.emit('EXTERNAL_ACCOUNT.STATUS_UPDATED', row.id, externalAccountToWire(deleted));
}

/**
 * Moves a live account to `status` and emits EXTERNAL_ACCOUNT.STATUS_UPDATED with the account as it
 * now reads; no write and no event when it is in that status already. The caller holds the row
 * (read with `{ forUpdate: true }`).
 */
export async function setExternalAccountStatus(
  u: Unit,
  row: ExternalAccountRow,
  status: ExternalAccountStatus,
): Promise<ExternalAccountRow> {
  if (row.status === status) return row;
  if (!(await updateExternalAccountStatus(u.trx, u.platform.id, row.id, status, u.at))) throw errors.notFound('External account', row.id);
  const updated: ExternalAccountRow = { ...row, status, updated_at: u.at };
  u.emit('EXTERNAL_ACCOUNT.STATUS_UPDATED', row.id, externalAccountToWire(updated));
  return updated;
}

export function externalAccountToWire(row: ExternalAccountRow): ExternalAccountWire {
  const w: ExternalAccountWire = {
    id: row.id,
    status: row.status as ExternalAccountStatus,
    currency: row.currency,
    accountInfo: JSON.parse(row.account_info) as AccountInfo,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.customer_id !== null) w.customerId = row.customer_id;
  if (row.platform_account_id !== null) w.platformAccountId = row.platform_account_id;
  if (row.ownership_type !== null) w.ownershipType = row.ownership_type as 'FIRST_PARTY' | 'THIRD_PARTY';
  if (row.default_uma_deposit !== null) w.defaultUmaDepositAccount = Number(row.default_uma_deposit) === 1;
  if (row.beneficiary_verification_status !== null) {
    w.beneficiaryVerificationStatus = row.beneficiary_verification_status as BeneficiaryVerificationStatus;
  }
  if (row.beneficiary_verified_name !== null) w.beneficiaryVerifiedData = { fullName: row.beneficiary_verified_name };
  return w;
}
