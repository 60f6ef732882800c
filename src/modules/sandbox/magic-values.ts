/**
 * The sandbox's magic values — the suffixes, names, amounts and literals that steer outcomes on a
 * SANDBOX platform — as tables for the page at /docs/sandbox-magic-values (magic-values.page.ts).
 *
 * Generated from the code that applies them, so the page cannot drift from it: where the rule is an
 * exported function (a payment's scenario, a card's provisioning, a name's KYC status …) every
 * 3-digit suffix is run through it and the suffixes whose outcome differs from "any other" become
 * the rows, described from what the function returned; where the value is an exported constant
 * (the OTP, the legacy signatures) the constant is shown. The few rules that live inside a service
 * (KYB by registration number, beneficiary verification) are written here, and
 * test/docs/magic-values.test.ts checks the page against every magic literal in src/.
 */
import { SANDBOX_OTP } from '../auth/otp.service.ts';
import { SANDBOX_PASSKEY_SIGNATURE } from '../auth/passkey.service.ts';
import { SANDBOX_SIGNATURE } from '../auth/signed-retry.ts';
import { descriptorMagic, fundingSourceMagic, provisioningFor } from '../cards/cards.rules.ts';
import { SANDBOX_CONTACT_CODE } from '../contact-verification/codes.ts';
import { sandboxKycStatus } from '../customers/customers.service.ts';
import { kycStatusForName } from '../kyc/kyc.customers.ts';
import { sandboxLivenessOutcome } from '../ownership/ownership.rules.ts';
import { quoteScenario, SANDBOX_UMA_RECEIVERS, type Scenario, transferScenario } from '../payments/sandbox-outcomes.ts';
import { SANDBOX_BANK_NAME, SANDBOX_ROUTING_NUMBER } from '../internal-accounts/funding.ts';
import { SANDBOX_SCA_CODE } from '../sca/sca.proofs.ts';
import { issuancePath, nextIssuance, scenarioOf, verifyCredentials } from '../stablecoins/stablecoins.rules.ts';
import { LEGACY_SANDBOX_OIDC_TOKEN } from '../../wallet/crypto/oidc.ts';

export interface MagicRow {
  /** The value as an integrator types it: a suffix (`002`), a name, a literal. */
  value: string;
  outcome: string;
}

export interface MagicTable {
  id: string;
  title: string;
  /** Which field of which operation carries the value. */
  field: string;
  rows: MagicRow[];
  /** What every value not listed does. */
  otherwise?: string;
}

/** `ms` as people say it: "30 s", "6 min", "1 h". */
export function duration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${ms / 1000} s`;
}

/** A payment scenario in words. */
export function describeScenario(s: Scenario): string {
  switch (s.kind) {
    case 'SUCCESS':
      return s.delayMs > 0 ? `completes after ${duration(s.delayMs)} (platform clock)` : 'completes';
    case 'RETURNED':
      return `completes, then the receiving bank returns it ${duration(s.returnAfterMs)} later (FAILED, source refunded)`;
    case 'FAIL': {
      const when =
        s.delayMs === 'now' ? 'at once (the request itself answers FAILED)' : s.delayMs > 0 ? `after ${duration(s.delayMs)} pending` : '';
      const refund = s.refund === 'COMPLETED' ? `source refunded (${s.refundReason})` : `refund FAILED too (${s.refundReason})`;
      return `fails ${when ? `${when} ` : ''}with failureReason ${s.reason}; ${refund}`.replace(/\s+/g, ' ');
    }
  }
}

const SUFFIXES = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

/**
 * The rows of a suffix rule: each 3-digit suffix whose outcome (as `describe` words it) differs from
 * that of a value without one (`''`), with that outcome; and the "any other" outcome.
 */
function probe(describe: (suffix: string) => string): { rows: MagicRow[]; otherwise: string } {
  const otherwise = describe('');
  const rows = SUFFIXES.map((value) => ({ value, outcome: describe(value) })).filter((r) => r.outcome !== otherwise);
  return { rows, otherwise };
}

function probed(id: string, title: string, field: string, describe: (suffix: string) => string): MagicTable {
  return { id, title, field, ...probe(describe) };
}

function cardProvisioning(suffix: string): string {
  const p = provisioningFor(`card-${suffix}`);
  if (p.kind === 'NEVER') return 'stays PENDING (never provisioned)';
  if (p.kind === 'REJECT') return 'provisioning is rejected: the card ends CLOSED';
  return p.delayMs > 0 ? `ACTIVE after ${duration(p.delayMs)} (platform clock)` : 'ACTIVE at once';
}

const DESCRIPTOR_OUTCOMES: Record<ReturnType<typeof descriptorMagic>, string> = {
  DECLINE_INSUFFICIENT_FUNDS: 'declined: INSUFFICIENT_FUNDS',
  DECLINE_CARD_PAUSED: 'declined: CARD_PAUSED',
  DELAYED_PULL: `approved; the funding pull stays PENDING before it is confirmed`,
  PULL_FAILS: 'approved; the funding pull fails',
  NONE: 'approved (when the card and its funding allow it)',
};

function stablecoinLink(suffix: string): string {
  const v = verifyCredentials(`client-${suffix}`, true);
  if (v.kind === 'REFUSED') return 'the provider refuses the credentials (400)';
  if (v.lapsesTo) return `ACTIVE, then ${v.lapsesTo} about a minute later (platform clock)`;
  return v.severalAccounts ? 'ACTIVE, exposing several provider accounts (pick one with stablecoinProviderAccountId)' : 'ACTIVE';
}

function stablecoinIssuance(suffix: string): string {
  const token = `TOKEN${suffix}`;
  const path = [issuancePath(token, true).first];
  for (let step = nextIssuance(path[0]!, token, true); step; step = nextIssuance(step.to, token, true)) path.push(step.to);
  return path.join(' → ');
}

const STABLECOIN_OPERATION: Record<ReturnType<typeof scenarioOf>, string> = {
  NORMAL: 'completes',
  FAIL: 'the provider transfer fails (FAILED, PROVIDER_TRANSFER_FAILED)',
  NEVER_FUNDED: 'awaits funds that never arrive',
  UNAVAILABLE: 'the provider is unavailable: 503 SERVICE_UNAVAILABLE, nothing created',
};

/** Stablecoin mint/burn amounts: the last two digits of the amount in cents. */
function stablecoinOperations(): MagicTable {
  const otherwise = STABLECOIN_OPERATION[scenarioOf(100, true)];
  const rows: MagicRow[] = [];
  for (let cents = 0; cents < 100; cents++) {
    const outcome = STABLECOIN_OPERATION[scenarioOf(cents, true)];
    if (outcome !== otherwise) rows.push({ value: `…${String(cents).padStart(2, '0')} cents`, outcome });
  }
  return {
    id: 'stablecoin-amounts',
    title: 'Stablecoin mint and burn',
    field: 'the amount in cents, last two digits',
    rows,
    otherwise,
  };
}

function umaReceivers(): MagicTable {
  return {
    id: 'uma-receivers',
    title: 'UMA receivers',
    field: 'receiverUmaAddress / destination UMA address `$<name>@<sandbox UMA domain>` (quotes, lookups)',
    rows: Object.entries(SANDBOX_UMA_RECEIVERS).map(([name, r]) => ({
      value: name,
      outcome: `${r.currency}: ${describeScenario(r.scenario)}`,
    })),
    otherwise: '404 UMA_NOT_FOUND',
  };
}

/** Rules applied inside services (no function of their own to run): written out here, checked by the test. */
const WRITTEN: MagicTable[] = [
  {
    id: 'kyb',
    title: 'KYB of a business customer',
    field: 'businessInfo.registrationNumber, last 3 digits (POST /verifications, the hosted KYC link)',
    rows: [
      { value: '001', outcome: 'kybStatus PENDING (verification PENDING_MANUAL_REVIEW)' },
      { value: '002', outcome: 'kybStatus REJECTED' },
    ],
    otherwise: 'kybStatus APPROVED',
  },
  {
    id: 'kyc-verification',
    title: 'KYC verification of an individual',
    field: 'fullName, last 3 characters (POST /verifications)',
    rows: [{ value: '003', outcome: 'RESOLVE_ERRORS: POOR_QUALITY_DOCUMENT on the latest identity document' }],
  },
  {
    id: 'beneficiary-verification',
    title: 'Beneficiary name verification',
    field: "external account's primary identifier, last 3 digits (account number, IBAN, CLABE, wallet address before any @)",
    rows: [
      { value: '102', outcome: 'beneficiaryVerificationStatus NOT_MATCHED' },
      { value: '103', outcome: 'beneficiaryVerificationStatus PARTIAL_MATCH' },
      { value: '104', outcome: 'beneficiaryVerificationStatus PENDING' },
      { value: '105', outcome: '400 INVALID_BANK_ACCOUNT: the receiving institution reports an invalid account' },
      { value: '106', outcome: 'beneficiaryVerificationStatus UNSUPPORTED' },
      { value: '107', outcome: 'beneficiaryVerificationStatus CHECKED_BY_RECEIVING_FI' },
    ],
    otherwise: 'beneficiaryVerificationStatus MATCHED',
  },
];

function literals(): MagicTable {
  return {
    id: 'literals',
    title: 'Fixed codes and legacy values',
    field: 'as named in each row',
    rows: [
      { value: SANDBOX_OTP, outcome: 'the EMAIL_OTP / SMS_OTP code of embedded-wallet auth (sent HPKE-encrypted in encryptedOtpBundle)' },
      { value: SANDBOX_CONTACT_CODE, outcome: 'the code of customer e-mail and phone verification (verify-email / verify-phone confirm)' },
      { value: SANDBOX_SCA_CODE, outcome: 'the strong-customer-authentication code (quote authorize, beneficiary trust)' },
      { value: SANDBOX_SIGNATURE, outcome: 'accepted as Service-Wallet-Signature without a key (legacy)' },
      { value: SANDBOX_PASSKEY_SIGNATURE, outcome: 'accepted as a passkey assertion signature, skipping WebAuthn (legacy)' },
      { value: LEGACY_SANDBOX_OIDC_TOKEN, outcome: 'rejected: OAUTH needs a JWT-shaped token with the right claims' },
      {
        value: SANDBOX_ROUTING_NUMBER,
        outcome: "the routing number of every internal account's sandbox funding instructions (shown, steers nothing)",
      },
      {
        value: SANDBOX_BANK_NAME,
        outcome: "the bank name of every internal account's sandbox funding instructions (shown, steers nothing)",
      },
    ],
  };
}

let cached: readonly MagicTable[] | undefined;

/** Every table of the page (computed once: ~20k calls of pure functions). */
export function magicValueTables(): readonly MagicTable[] {
  cached ??= [
    probed('quote-execution', 'Quote execution to an external account', "destination account's primary identifier, last 3 digits", (s) =>
      describeScenario(quoteScenario(s)),
    ),
    probed('transfer-out', 'Transfer out', "destination external account's primary identifier, last 3 digits", (s) =>
      describeScenario(transferScenario(s, false)),
    ),
    probed('transfer-in', 'Transfer in (a pull)', "source external account's primary identifier, last 3 digits", (s) =>
      describeScenario(transferScenario(s, true)),
    ),
    umaReceivers(),
    probed(
      'kyc-create',
      'KYC of an individual customer at creation',
      'fullName, last 3 characters (POST /customers)',
      (s) => `kycStatus ${sandboxKycStatus(`Jane Smith${s}`)}`,
    ),
    probed(
      'beneficial-owner',
      'KYC of a beneficial owner',
      'personalInfo.lastName, last 3 characters',
      (s) => `kycStatus ${kycStatusForName(`Smith${s}`)}`,
    ),
    ...WRITTEN,
    probed('card-issuance', 'Card issuance', 'platformCardId (or the generated id), last 3 characters', cardProvisioning),
    probed(
      'card-funding',
      'Card funding sources',
      'the internal account id bound as a funding source, last 3 characters',
      (s) => fundingSourceMagic(`InternalAccount:x${s}`) ?? 'accepted',
    ),
    probed(
      'card-descriptor',
      'Card simulations (authorization family)',
      'merchant.descriptor, last 3 characters',
      (s) => DESCRIPTOR_OUTCOMES[descriptorMagic(`MERCHANT ${s}`)],
    ),
    probed('liveness', 'Wallet ownership liveness check', 'wallet address, last 3 digits', (s) => {
      const o = sandboxLivenessOutcome(s);
      return o === 'NO_RESULT' ? 'never completed: the challenge expires' : o === 'FAIL' ? 'fails' : 'passes';
    }),
    probed('stablecoin-link', 'Stablecoin provider account link', 'apiClientId, last 3 digits', stablecoinLink),
    probed('stablecoin-issuance', 'Stablecoin issuance', 'providerTokenIdentifier, last 3 digits', stablecoinIssuance),
    stablecoinOperations(),
    literals(),
  ];
  return cached;
}
