/**
 * Funding payment instructions of an internal account: the coordinates a payer uses to deposit
 * into it. They are derived from the account id and its stored reference, so nothing but the
 * reference is stored, and they are the same on every read.
 */
import { createHash } from 'node:crypto';
import { CRYPTO_CODES } from '../../lib/currencies.ts';
import { clabeCheckDigit, ibanOf } from '../external-accounts/checksums.ts';

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
  const info = bankCoordinates(code, id, reference, holderName);
  return [{ instructionsNotes: `Include the reference ${reference} in the transfer memo`, accountOrWalletInfo: info }];
}

type Coordinates = FundingInstruction['accountOrWalletInfo'];

/** A mobile-money wallet's coordinates: the collecting number, its provider, and (West/Central Africa) the region. */
function mobile(dial: string, localDigits: number, provider: string, region?: string) {
  return (id: string): Record<string, unknown> => ({
    phoneNumber: `+${dial}${digits(`${id}:phone`, localDigits)}`,
    provider,
    ...(region ? { region } : {}),
  });
}

/** A bank identified by name and SWIFT code in `country`, with an account number. */
function swiftBank(country: string) {
  return (id: string): Record<string, unknown> => ({
    bankName: SANDBOX_BANK_NAME,
    accountNumber: digits(id, 12),
    swiftCode: `CRDR${country}2S`,
  });
}

const nameAndNumber =
  (length = 12) =>
  (id: string): Record<string, unknown> => ({ bankName: SANDBOX_BANK_NAME, accountNumber: digits(id, length) });

/**
 * Each fiat currency's deposit coordinates, with the fields the live API's `Payment<Ccy>AccountInfo`
 * schema requires (and its rails). All are fictitious and derived from the account id; IBANs and
 * the CLABE carry valid check digits, the PIX code a valid CRC.
 */
const BANKS: Record<string, { rails: string[]; fields: (id: string, reference: string) => Record<string, unknown> }> = {
  USD: {
    rails: ['ACH', 'WIRE', 'RTP', 'FEDNOW'],
    fields: (id) => ({ accountNumber: digits(id, 12), routingNumber: SANDBOX_ROUTING_NUMBER, bankName: SANDBOX_BANK_NAME }),
  },
  EUR: { rails: ['SEPA', 'SEPA_INSTANT'], fields: (id) => ({ iban: ibanOf('DE', digits(id, 18)), swiftCode: 'CRDRDEFFXXX' }) },
  DKK: { rails: ['SEPA'], fields: (id) => ({ iban: ibanOf('DK', digits(id, 14)), swiftCode: 'CRDRDKKK' }) },
  AED: { rails: ['BANK_TRANSFER'], fields: (id) => ({ iban: ibanOf('AE', digits(id, 19)), swiftCode: 'CRDRAEAD' }) },
  GBP: { rails: ['FASTER_PAYMENTS'], fields: (id) => ({ sortCode: digits(`${id}:sort`, 6), accountNumber: digits(id, 8) }) },
  MXN: { rails: ['SPEI'], fields: (id) => ({ clabeNumber: clabe(`646180${digits(id, 11)}`) }) },
  BRL: { rails: ['PIX'], fields: (id, reference) => ({ qrCode: pixCode(id, reference) }) },
  INR: {
    rails: ['UPI', 'NEFT', 'RTGS'],
    fields: (id) => ({
      vpa: `corridor.${digits(id, 10)}@sandbox`,
      accountNumber: digits(id, 14),
      ifsc: 'CRDR0000001',
      bankName: SANDBOX_BANK_NAME,
    }),
  },
  CAD: {
    rails: ['BANK_TRANSFER'],
    fields: (id) => ({ bankCode: '001', branchCode: digits(`${id}:branch`, 5), accountNumber: digits(id, 12) }),
  },
  NGN: { rails: ['BANK_TRANSFER'], fields: nameAndNumber(10) },
  ZAR: { rails: ['BANK_TRANSFER'], fields: nameAndNumber(11) },
  PHP: { rails: ['BANK_TRANSFER'], fields: nameAndNumber(12) },
  HKD: { rails: ['BANK_TRANSFER'], fields: swiftBank('HK') },
  MYR: { rails: ['BANK_TRANSFER'], fields: swiftBank('MY') },
  THB: { rails: ['BANK_TRANSFER'], fields: swiftBank('TH') },
  VND: { rails: ['BANK_TRANSFER'], fields: swiftBank('VN') },
  SGD: { rails: ['PAYNOW', 'FAST', 'BANK_TRANSFER'], fields: swiftBank('SG') },
  IDR: { rails: ['BANK_TRANSFER'], fields: (id) => ({ ...swiftBank('ID')(id), phoneNumber: `+62${digits(`${id}:phone`, 10)}` }) },
  BDT: { rails: ['BANK_TRANSFER'], fields: (id) => ({ ...swiftBank('BD')(id), branchCode: digits(`${id}:branch`, 5) }) },
  CNY: { rails: ['BANK_TRANSFER'], fields: nameAndNumber(16) },
  GHS: { rails: ['BANK_TRANSFER'], fields: nameAndNumber(13) },
  EGP: { rails: ['BANK_TRANSFER'], fields: (id) => ({ bankName: SANDBOX_BANK_NAME, iban: ibanOf('EG', digits(id, 25)) }) },
  PKR: { rails: ['BANK_TRANSFER'], fields: (id) => ({ bankName: SANDBOX_BANK_NAME, iban: ibanOf('PK', `CRDR${digits(id, 16)}`) }) },
  GTQ: { rails: ['BANK_TRANSFER'], fields: (id) => ({ ...nameAndNumber(12)(id), bankAccountType: 'CHECKING' }) },
  JMD: {
    rails: ['BANK_TRANSFER'],
    fields: (id) => ({ ...nameAndNumber(12)(id), bankAccountType: 'CHECKING', branchCode: digits(`${id}:branch`, 5) }),
  },
  ARS: { rails: ['BANK_TRANSFER'], fields: (id) => ({ accountNumber: digits(id, 22) }) },
  COP: { rails: ['BANK_TRANSFER'], fields: (_id, reference) => ({ paymentUrl: `https://pay.corridor.invalid/cop/${reference}` }) },
  KES: { rails: ['MOBILE_MONEY'], fields: mobile('254', 9, 'M-PESA') },
  TZS: { rails: ['MOBILE_MONEY'], fields: mobile('255', 9, 'M-Pesa') },
  UGX: { rails: ['MOBILE_MONEY'], fields: mobile('256', 9, 'MTN Mobile Money') },
  RWF: { rails: ['MOBILE_MONEY'], fields: mobile('250', 9, 'MTN Mobile Money') },
  ZMW: { rails: ['MOBILE_MONEY'], fields: mobile('260', 9, 'MTN Mobile Money') },
  MWK: { rails: ['MOBILE_MONEY'], fields: mobile('265', 9, 'Airtel Money') },
  BWP: { rails: ['MOBILE_MONEY'], fields: mobile('267', 8, 'Orange Money') },
  HTG: { rails: ['MOBILE_MONEY'], fields: (id) => ({ phoneNumber: `+509${digits(`${id}:phone`, 8)}` }) },
  XOF: { rails: ['MOBILE_MONEY'], fields: mobile('221', 9, 'Orange Money', 'SN') },
  XAF: { rails: ['MOBILE_MONEY'], fields: mobile('237', 9, 'MTN Mobile Money', 'CM') },
};

/**
 * The deposit coordinates of a fiat account: its currency's own (BANKS), or, for a currency the
 * live API has no local deposit schema for (JPY), a SWIFT transfer to the sandbox bank.
 */
function bankCoordinates(code: string, id: string, reference: string, holderName: string): Coordinates {
  const bank = BANKS[code];
  if (!bank) {
    return {
      accountType: 'SWIFT_ACCOUNT',
      reference,
      paymentRails: ['SWIFT'],
      accountHolderName: holderName,
      bankName: SANDBOX_BANK_NAME,
      swiftCode: 'CRDRUS33',
      country: 'US',
      accountNumber: digits(id, 12),
    };
  }
  return {
    accountType: code === 'USD' ? 'US_ACCOUNT' : `${code}_ACCOUNT`,
    reference,
    paymentRails: bank.rails,
    accountHolderName: holderName,
    ...bank.fields(id, reference),
  };
}

function clabe(first17: string): string {
  return `${first17}${clabeCheckDigit(first17)}`;
}

/** A PIX "copia e cola" (EMV QR) payload: the sandbox bank's key, the reference as the transaction id, CRC16-CCITT. */
function pixCode(id: string, reference: string): string {
  const field = (tag: string, value: string) => `${tag}${String(value.length).padStart(2, '0')}${value}`;
  const txid = reference.replace(/[^A-Za-z0-9]/g, '').slice(0, 25) || '***';
  const account = field('00', 'br.gov.bcb.pix') + field('01', `${digits(id, 8)}-corridor-sandbox`);
  const body = [
    field('00', '01'),
    field('26', account),
    field('52', '0000'),
    field('53', '986'),
    field('58', 'BR'),
    field('59', 'Corridor Sandbox'),
    field('60', 'Sao Paulo'),
    field('62', field('05', txid)),
    '6304',
  ].join('');
  return body + crc16(body);
}

/** CRC-16/CCITT-FALSE (polynomial 0x1021, initial 0xFFFF), as 4 upper-case hex digits. */
function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}
