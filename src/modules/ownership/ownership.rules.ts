/**
 * The rules of ownership verification that are not storage or HTTP: which external accounts it
 * applies to (and so which are created awaiting it), how long a challenge lives, what the wallet
 * signs, and how the sandbox decides a liveness check. docs/ownership-verification.md has the why.
 */
import { WALLET_VARIANTS } from '../external-accounts/wallet-variants.ts';

export const OWNERSHIP_METHODS = ['WALLET_SIGNATURE', 'LIVENESS'] as const;
export type OwnershipMethod = (typeof OWNERSHIP_METHODS)[number];

/** The seven self-custody-capable wallet types (the live API's WalletCustodyFields carriers); Lightning is not one. */
const CUSTODY_WALLET_TYPES: ReadonlySet<string> = new Set(WALLET_VARIANTS.map((w) => w.accountType));

/** A signature challenge's lifetime: time to open the wallet and approve one message. */
export const SIGNATURE_CHALLENGE_TTL_MS = 15 * 60_000;
/** A liveness challenge's lifetime: a hosted identity check with a document takes longer. */
export const LIVENESS_CHALLENGE_TTL_MS = 60 * 60_000;
/** Sandbox: the hosted liveness check reports back this long after the challenge (platform clock). */
export const SANDBOX_LIVENESS_DELAY_MS = 30_000;

/** Statuses from which a challenge may be issued. */
export const VERIFIABLE_STATUSES: ReadonlySet<string> = new Set(['PENDING_OWNERSHIP_VERIFICATION', 'UNVERIFIED']);

/** Why ownership verification does not apply to an account, whatever its status. */
export type NotApplicable = 'NOT_A_CRYPTO_WALLET' | 'CUSTODIAL_WALLET' | 'NOT_FIRST_PARTY';

/** What ownership verification needs to know of an account. */
export interface OwnershipSubject {
  accountType: string;
  /** `accountInfo.vaspName`: present when an exchange holds the wallet. */
  vaspName?: unknown;
  ownershipType: string | null | undefined;
}

/** Why verification does not apply to the account, or undefined when it does (a FIRST_PARTY self-custody wallet). */
export function notApplicable(a: OwnershipSubject): NotApplicable | undefined {
  if (!CUSTODY_WALLET_TYPES.has(a.accountType)) return 'NOT_A_CRYPTO_WALLET';
  if (a.vaspName !== undefined && a.vaspName !== null) return 'CUSTODIAL_WALLET';
  if (a.ownershipType !== 'FIRST_PARTY') return 'NOT_FIRST_PARTY';
  return undefined;
}

/**
 * The status an external account is created in: a FIRST_PARTY self-custody wallet awaits its
 * ownership verification (Corridor treats every platform as subject to counterparty requirements);
 * everything else is ACTIVE at once.
 */
export function initialExternalAccountStatus(a: OwnershipSubject): 'ACTIVE' | 'PENDING_OWNERSHIP_VERIFICATION' {
  return notApplicable(a) === undefined ? 'PENDING_OWNERSHIP_VERIFICATION' : 'ACTIVE';
}

/** The message a wallet signs: names the address it proves control of and a single-use nonce. */
export function messageToSign(address: string, nonce: string): string {
  return `I verify that I control the wallet ${address}. Nonce: ${nonce}`;
}

/**
 * The sandbox's hosted liveness page. The `.invalid` top-level domain (RFC 2606) never resolves:
 * Corridor hosts no biometric flow; the outcome comes from the sandbox table below.
 */
export function sandboxVerificationLink(sessionId: string): string {
  return `https://liveness.sandbox.corridor.invalid/session/${sessionId}`;
}

export type LivenessOutcome = 'PASS' | 'FAIL' | 'NO_RESULT';

/**
 * Sandbox liveness outcomes by the wallet address's last three digits (digits every address
 * alphabet has: hex, base58 and bech32 all include 2 and 3): 222 fails, 333 is never completed
 * (the challenge just expires), anything else passes.
 */
export function sandboxLivenessOutcome(suffix: string): LivenessOutcome {
  if (suffix === '222') return 'FAIL';
  if (suffix === '333') return 'NO_RESULT';
  return 'PASS';
}
