/**
 * Funding payment instructions of an internal account: the coordinates a payer uses to deposit
 * into it. They are derived from the account id and its stored reference, so nothing but the
 * reference is stored, and they are the same on every read.
 */
import { createHash } from 'node:crypto';
import { CRYPTO_CODES } from '../../lib/currencies.ts';

/** A checksum-valid, fictitious ABA routing number for the sandbox bank. */
export const SANDBOX_ROUTING_NUMBER = '123456780';
export const SANDBOX_BANK_NAME = 'Corridor Sandbox Bank';

export interface FundingInstruction {
  instructionsNotes?: string;
  /** Whether the account paid into is the platform's own (true) or a customer's (the live PaymentInstructions field). */
  isPlatformAccount?: boolean;
  accountOrWalletInfo: Record<string, unknown> & { accountType: string };
}

function digits(seed: string, n: number): string {
  const h = createHash('sha256').update(seed).digest();
  let out = '';
  for (let i = 0; out.length < n; i++) out += String(h[i % h.length]! % 10);
  return out;
}

function hex(seed: string, n: number): string {
  return createHash('sha256').update(seed).digest('hex').slice(0, n);
}

/** Derived instructions are pure functions of their inputs; listing accounts is a hot read. */
const MEMO_SIZE = 10_000;
const memo = new Map<string, FundingInstruction[]>();

export function fundingInstructions(
  account: { id: string; currency: string; funding_reference: string },
  holderName: string,
  platformAccount: boolean,
): FundingInstruction[] {
  const key = `${account.id}\u0000${account.funding_reference}\u0000${holderName}\u0000${platformAccount}`;
  let hit = memo.get(key);
  if (!hit) {
    hit = deriveInstructions(account, holderName).map((i) => ({ ...i, isPlatformAccount: platformAccount }));
    if (memo.size >= MEMO_SIZE) memo.delete(memo.keys().next().value!);
    memo.set(key, hit);
  }
  return hit;
}

function deriveInstructions(
  account: { id: string; currency: string; funding_reference: string },
  holderName: string,
): FundingInstruction[] {
  const { id, currency: code, funding_reference: reference } = account;
  if (code === 'USDB' || code === 'BTC') {
    return [
      {
        instructionsNotes: `Send ${code} to this address`,
        accountOrWalletInfo: {
          accountType: 'LAYER2_WALLET',
          assetType: code,
          address: `sp1${hex(id, 58)}`,
          invoice: `lnsb1${hex(`${id}:invoice`, 60)}`,
        },
      },
    ];
  }
  if (CRYPTO_CODES.has(code)) {
    return [
      {
        instructionsNotes: `Send ${code} to this address`,
        accountOrWalletInfo: { accountType: 'CHAIN2_WALLET', assetType: code, address: hex(id, 44) },
      },
    ];
  }
  const accountType = code === 'USD' ? 'US_ACCOUNT' : `${code}_ACCOUNT`;
  const info: FundingInstruction['accountOrWalletInfo'] = {
    accountType,
    reference,
    accountNumber: digits(id, 12),
    accountHolderName: holderName,
    bankName: SANDBOX_BANK_NAME,
  };
  if (code === 'USD') info.routingNumber = SANDBOX_ROUTING_NUMBER;
  return [{ instructionsNotes: `Include the reference ${reference} in the transfer memo`, accountOrWalletInfo: info }];
}
