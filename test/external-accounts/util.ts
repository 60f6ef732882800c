/** Builders, examples and assertions shared by the external-account tests. */
import { expect } from 'vitest';
import { clabeCheckDigit } from '../../src/modules/external-accounts/checksums.ts';
import type { Client, Res } from '../helpers/http.ts';

export const ADDRESS = { line1: '123 Main Street', city: 'San Francisco', state: 'CA', postalCode: '94105', country: 'US' };

export const person = (fullName = 'John Doe', extra: Record<string, unknown> = {}) => ({
  beneficiaryType: 'INDIVIDUAL',
  fullName,
  ...extra,
});

export interface Example {
  currency: string;
  accountInfo: Record<string, unknown>;
  /** The rails Corridor should offer for it (bank accounts only). */
  rails?: string[];
  /** A broken copy and the field path the 400 must name. */
  invalid: { accountInfo: Record<string, unknown>; field: string };
}

const bank = (accountType: string, fields: Record<string, unknown>, beneficiary: Record<string, unknown> = person()) => ({
  accountType,
  ...fields,
  beneficiary,
});
const EVM = '0xAbCDEF1234567890aBCdEf1234567890ABcDef12';
const AE_ADDRESS = { line1: '1 Sheikh Zayed Road', city: 'Dubai', postalCode: '00000', country: 'AE' };
/** A mobile-money account: valid with `phone`, invalid with `badPhone` (the field the 400 names). */
const mobile = (ccy: string, phone: string, extra: Record<string, unknown>, badPhone: string): Example => ({
  currency: ccy,
  accountInfo: bank(`${ccy}_ACCOUNT`, { phoneNumber: phone, ...extra }),
  rails: ['MOBILE_MONEY'],
  invalid: { accountInfo: bank(`${ccy}_ACCOUNT`, { phoneNumber: badPhone, ...extra }), field: 'accountInfo.phoneNumber' },
});

/** One valid and one invalid accountInfo per canonical accountType Corridor offers. */
export const EXAMPLES: Record<string, Example> = {
  US_ACCOUNT: {
    currency: 'USD',
    accountInfo: bank(
      'US_ACCOUNT',
      { accountNumber: '12345678901', routingNumber: '021000021', bankName: 'Chase Bank', bankAccountType: 'CHECKING' },
      person('John Doe', { birthDate: '1990-01-15', nationality: 'US', address: ADDRESS }),
    ),
    rails: ['ACH', 'WIRE', 'RTP', 'FEDNOW'],
    invalid: {
      accountInfo: bank('US_ACCOUNT', { accountNumber: '12345678901', routingNumber: '02100002' }),
      field: 'accountInfo.routingNumber',
    },
  },
  EUR_ACCOUNT: {
    currency: 'EUR',
    accountInfo: bank(
      'EUR_ACCOUNT',
      { iban: 'DE89370400440532013000', swiftCode: 'DEUTDEFF' },
      person('Hans Müller', { countryOfResidence: 'DE' }),
    ),
    rails: ['SEPA', 'SEPA_INSTANT'],
    invalid: {
      accountInfo: bank('EUR_ACCOUNT', { iban: 'DE89370400440532013001' }, person('Hans Müller', { countryOfResidence: 'DE' })),
      field: 'accountInfo.iban',
    },
  },
  GBP_ACCOUNT: {
    currency: 'GBP',
    accountInfo: bank('GBP_ACCOUNT', { sortCode: '601613', accountNumber: '31926819' }),
    rails: ['FASTER_PAYMENTS'],
    invalid: { accountInfo: bank('GBP_ACCOUNT', { sortCode: '60-16-13', accountNumber: '31926819' }), field: 'accountInfo.sortCode' },
  },
  MXN_ACCOUNT: {
    currency: 'MXN',
    accountInfo: bank('MXN_ACCOUNT', { clabeNumber: '032180000118359719' }),
    rails: ['SPEI'],
    invalid: { accountInfo: bank('MXN_ACCOUNT', { clabeNumber: '032180000118359710' }), field: 'accountInfo.clabeNumber' },
  },
  BRL_ACCOUNT: {
    currency: 'BRL',
    accountInfo: bank('BRL_ACCOUNT', { pixKey: 'maria.silva@example.com', pixKeyType: 'EMAIL', taxId: '52998224725' }),
    rails: ['PIX'],
    invalid: {
      accountInfo: bank('BRL_ACCOUNT', { pixKey: '52998224726', pixKeyType: 'CPF', taxId: '52998224725' }),
      field: 'accountInfo.pixKey',
    },
  },
  INR_ACCOUNT: {
    currency: 'INR',
    accountInfo: bank('INR_ACCOUNT', { vpa: 'priya@okhdfc' }),
    rails: ['UPI'],
    invalid: { accountInfo: bank('INR_ACCOUNT', { vpa: 'priya' }), field: 'accountInfo.vpa' },
  },
  CAD_ACCOUNT: {
    currency: 'CAD',
    accountInfo: bank('CAD_ACCOUNT', { bankCode: '001', branchCode: '00011', accountNumber: '1234567' }),
    rails: ['BANK_TRANSFER'],
    invalid: {
      accountInfo: bank('CAD_ACCOUNT', { bankCode: '1', branchCode: '00011', accountNumber: '1234567' }),
      field: 'accountInfo.bankCode',
    },
  },
  DKK_ACCOUNT: {
    currency: 'DKK',
    accountInfo: bank('DKK_ACCOUNT', { iban: 'DK5000400440116243' }),
    rails: ['SEPA', 'SEPA_INSTANT'],
    invalid: { accountInfo: bank('DKK_ACCOUNT', { iban: 'DK5000400440116244' }), field: 'accountInfo.iban' },
  },
  NGN_ACCOUNT: {
    currency: 'NGN',
    accountInfo: bank('NGN_ACCOUNT', { accountNumber: '0123456789', bankName: 'Access Bank' }),
    rails: ['BANK_TRANSFER'],
    invalid: { accountInfo: bank('NGN_ACCOUNT', { accountNumber: '12345', bankName: 'Access Bank' }), field: 'accountInfo.accountNumber' },
  },
  PHP_ACCOUNT: {
    currency: 'PHP',
    accountInfo: bank('PHP_ACCOUNT', { bankName: 'BDO Unibank', accountNumber: '001234567890' }),
    rails: ['BANK_TRANSFER'],
    invalid: { accountInfo: bank('PHP_ACCOUNT', { bankName: 'BDO Unibank' }), field: 'accountInfo.accountNumber' },
  },
  SGD_ACCOUNT: {
    currency: 'SGD',
    accountInfo: bank('SGD_ACCOUNT', { accountNumber: '1234567890', swiftCode: 'DBSSSGSG' }),
    rails: ['FAST', 'BANK_TRANSFER'],
    invalid: { accountInfo: bank('SGD_ACCOUNT', { accountNumber: '1234567890', swiftCode: 'DBS' }), field: 'accountInfo.swiftCode' },
  },
  HKD_ACCOUNT: {
    currency: 'HKD',
    accountInfo: bank('HKD_ACCOUNT', { bankName: 'HSBC', accountNumber: '123456789', swiftCode: 'HSBCHKHH' }),
    rails: ['BANK_TRANSFER'],
    invalid: { accountInfo: bank('HKD_ACCOUNT', { bankName: 'HSBC', accountNumber: '123456789' }), field: 'accountInfo.swiftCode' },
  },
  IDR_ACCOUNT: {
    currency: 'IDR',
    accountInfo: bank('IDR_ACCOUNT', {
      bankName: 'Bank Central Asia',
      accountNumber: '1234567890',
      swiftCode: 'CENAIDJA',
      phoneNumber: '+628123456789',
    }),
    rails: ['BANK_TRANSFER'],
    invalid: {
      accountInfo: bank('IDR_ACCOUNT', {
        bankName: 'Bank Central Asia',
        accountNumber: '1234567890',
        swiftCode: 'CENAIDJA',
        phoneNumber: '+658123456789',
      }),
      field: 'accountInfo.phoneNumber',
    },
  },
  MYR_ACCOUNT: {
    currency: 'MYR',
    accountInfo: bank('MYR_ACCOUNT', { bankName: 'Maybank', accountNumber: '112233445566', swiftCode: 'MBBEMYKL' }),
    rails: ['BANK_TRANSFER'],
    invalid: {
      accountInfo: bank('MYR_ACCOUNT', { bankName: '', accountNumber: '112233445566', swiftCode: 'MBBEMYKL' }),
      field: 'accountInfo.bankName',
    },
  },
  THB_ACCOUNT: {
    currency: 'THB',
    accountInfo: bank('THB_ACCOUNT', { bankName: 'Bangkok Bank', accountNumber: '1234567890', swiftCode: 'BKKBTHBK' }),
    rails: ['BANK_TRANSFER'],
    invalid: {
      accountInfo: bank('THB_ACCOUNT', { bankName: 'Bangkok Bank', accountNumber: '1234567890', swiftCode: 'bkkbthbk' }),
      field: 'accountInfo.swiftCode',
    },
  },
  VND_ACCOUNT: {
    currency: 'VND',
    accountInfo: bank('VND_ACCOUNT', { bankName: 'Vietcombank', accountNumber: '0011001234567', swiftCode: 'BFTVVNVX' }),
    rails: ['BANK_TRANSFER'],
    invalid: {
      accountInfo: bank(
        'VND_ACCOUNT',
        { bankName: 'Vietcombank', accountNumber: '0011001234567', swiftCode: 'BFTVVNVX' },
        { beneficiaryType: 'INDIVIDUAL' },
      ),
      field: 'accountInfo.beneficiary.fullName',
    },
  },
  ZAR_ACCOUNT: {
    currency: 'ZAR',
    accountInfo: bank('ZAR_ACCOUNT', { accountNumber: '62123456789', bankName: 'FNB' }),
    rails: ['BANK_TRANSFER'],
    invalid: { accountInfo: bank('ZAR_ACCOUNT', { accountNumber: '6212', bankName: 'FNB' }), field: 'accountInfo.accountNumber' },
  },
  COP_ACCOUNT: {
    currency: 'COP',
    accountInfo: bank(
      'COP_ACCOUNT',
      { bankName: 'Bancolombia', accountNumber: '12345678901', bankAccountType: 'SAVINGS' },
      person('Ana Gómez', { documentType: 'CC', documentNumber: '1020304050' }),
    ),
    rails: ['BANK_TRANSFER'],
    invalid: {
      accountInfo: bank('COP_ACCOUNT', { bankName: 'Bancolombia', accountNumber: '12345678901' }),
      field: 'accountInfo.bankAccountType',
    },
  },
  SLV_ACCOUNT: {
    currency: 'USD',
    accountInfo: bank('SLV_ACCOUNT', { phoneNumber: '+50370123456' }),
    rails: ['MOBILE_MONEY'],
    invalid: { accountInfo: bank('SLV_ACCOUNT', { bankName: 'Banco Agrícola' }), field: 'accountInfo.accountNumber' },
  },
  KES_ACCOUNT: {
    currency: 'KES',
    accountInfo: bank('KES_ACCOUNT', { phoneNumber: '+254712345678', provider: 'M-PESA' }),
    rails: ['MOBILE_MONEY'],
    invalid: { accountInfo: bank('KES_ACCOUNT', { phoneNumber: '+255712345678', provider: 'M-PESA' }), field: 'accountInfo.phoneNumber' },
  },
  AED_ACCOUNT: {
    currency: 'AED',
    accountInfo: bank(
      'AED_ACCOUNT',
      { iban: 'AE070331234567890123456', swiftCode: 'EBILAEAD' },
      person('Omar Ali', { address: AE_ADDRESS }),
    ),
    rails: ['BANK_TRANSFER'],
    invalid: {
      accountInfo: bank('AED_ACCOUNT', { iban: 'AE070331234567890123457' }, person('Omar Ali', { address: AE_ADDRESS })),
      field: 'accountInfo.iban',
    },
  },
  GTQ_ACCOUNT: {
    currency: 'GTQ',
    accountInfo: bank(
      'GTQ_ACCOUNT',
      { accountNumber: '0123456789', bankAccountType: 'CHECKING', bankName: 'Banco Industrial' },
      person('Ana López', { countryOfResidence: 'GT', phoneNumber: '+50212345678' }),
    ),
    rails: ['BANK_TRANSFER'],
    invalid: {
      accountInfo: bank(
        'GTQ_ACCOUNT',
        { accountNumber: '0123456789', bankName: 'Banco Industrial' },
        person('Ana López', { countryOfResidence: 'GT', phoneNumber: '+50212345678' }),
      ),
      field: 'accountInfo.bankAccountType',
    },
  },
  JMD_ACCOUNT: {
    currency: 'JMD',
    accountInfo: bank(
      'JMD_ACCOUNT',
      { accountNumber: '123456789', branchCode: '12345', bankAccountType: 'SAVINGS', bankName: 'NCB' },
      person('Mark Brown', { address: { ...ADDRESS, country: 'JM' }, phoneNumber: '+18761234567' }),
    ),
    rails: ['BANK_TRANSFER'],
    invalid: {
      accountInfo: bank(
        'JMD_ACCOUNT',
        { accountNumber: '123456789', branchCode: '123', bankAccountType: 'SAVINGS', bankName: 'NCB' },
        person('Mark Brown', { address: { ...ADDRESS, country: 'JM' }, phoneNumber: '+18761234567' }),
      ),
      field: 'accountInfo.branchCode',
    },
  },
  BDT_ACCOUNT: {
    currency: 'BDT',
    accountInfo: bank('BDT_ACCOUNT', { bankName: 'Sonali Bank', accountNumber: '1234567890123' }),
    rails: ['BANK_TRANSFER'],
    invalid: { accountInfo: bank('BDT_ACCOUNT', { bankName: 'Sonali Bank', phoneNumber: '12' }), field: 'accountInfo.phoneNumber' },
  },
  GHS_ACCOUNT: {
    currency: 'GHS',
    accountInfo: bank('GHS_ACCOUNT', { bankName: 'GCB Bank', phoneNumber: '+233241234567' }),
    rails: ['MOBILE_MONEY'],
    invalid: { accountInfo: bank('GHS_ACCOUNT', { bankName: 'GCB Bank', phoneNumber: '0241234567' }), field: 'accountInfo.phoneNumber' },
  },
  CNY_ACCOUNT: {
    currency: 'CNY',
    // CNY bank transfers are business-to-business.
    accountInfo: bank(
      'CNY_ACCOUNT',
      { bankName: 'Bank of China', accountNumber: '6217000010001234567' },
      {
        beneficiaryType: 'BUSINESS',
        legalName: 'Shenzhen Trading Co',
        address: { line1: '1 Shennan Rd', postalCode: '518000', country: 'CN' },
      },
    ),
    rails: ['BANK_TRANSFER'],
    invalid: { accountInfo: bank('CNY_ACCOUNT', { accountNumber: '6217000010001234567' }), field: 'accountInfo.bankName' },
  },
  EGP_ACCOUNT: {
    currency: 'EGP',
    accountInfo: bank('EGP_ACCOUNT', { bankName: 'National Bank of Egypt', iban: 'EG380019000500000000263180002' }),
    rails: ['BANK_TRANSFER'],
    invalid: {
      accountInfo: bank('EGP_ACCOUNT', { bankName: 'National Bank of Egypt', iban: 'EG380019000500000000263180003' }),
      field: 'accountInfo.iban',
    },
  },
  PKR_ACCOUNT: {
    currency: 'PKR',
    accountInfo: bank('PKR_ACCOUNT', { bankName: 'HBL', accountNumber: '12345678901234' }),
    rails: ['BANK_TRANSFER'],
    invalid: {
      accountInfo: bank('PKR_ACCOUNT', { bankName: 'HBL', accountNumber: '12345678901234', iban: 'PK36SCBL0000001123456703' }),
      field: 'accountInfo.iban',
    },
  },
  TZS_ACCOUNT: mobile('TZS', '+255712345678', { provider: 'M-Pesa' }, '+254712345678'),
  RWF_ACCOUNT: mobile('RWF', '+250781234567', { provider: 'MTN' }, '+255781234567'),
  ZMW_ACCOUNT: mobile('ZMW', '+260971234567', { provider: 'Airtel' }, '+250971234567'),
  UGX_ACCOUNT: mobile('UGX', '+256771234567', { provider: 'MTN' }, '256771234567'),
  MWK_ACCOUNT: mobile('MWK', '+265991234567', { provider: 'Airtel' }, '265991234567'),
  BWP_ACCOUNT: mobile('BWP', '+26771234567', { provider: 'Orange' }, '26771234567'),
  HTG_ACCOUNT: mobile('HTG', '+50934123456', {}, '34123456'),
  XOF_ACCOUNT: {
    currency: 'XOF',
    accountInfo: bank('XOF_ACCOUNT', { phoneNumber: '+221771234567', provider: 'Orange', region: 'SN' }),
    rails: ['MOBILE_MONEY'],
    invalid: {
      accountInfo: bank('XOF_ACCOUNT', { phoneNumber: '+221771234567', provider: 'Orange', region: 'GH' }),
      field: 'accountInfo.region',
    },
  },
  XAF_ACCOUNT: {
    currency: 'XAF',
    accountInfo: bank('XAF_ACCOUNT', { phoneNumber: '+237671234567', provider: 'MTN', region: 'CM' }),
    rails: ['MOBILE_MONEY'],
    invalid: {
      accountInfo: bank('XAF_ACCOUNT', { phoneNumber: '+237671234567', provider: 'MTN', region: 'GA' }),
      field: 'accountInfo.region',
    },
  },
  SWIFT_ACCOUNT: {
    currency: 'EUR',
    accountInfo: bank('SWIFT_ACCOUNT', { country: 'NG', swiftCode: 'DEUTDEFF', bankName: 'Deutsche Bank', accountNumber: '1234567890' }),
    rails: ['SWIFT'],
    invalid: {
      accountInfo: bank('SWIFT_ACCOUNT', { country: 'NG', swiftCode: 'DEUTDEFF', bankName: 'Deutsche Bank' }),
      field: 'accountInfo.accountNumber',
    },
  },
  LAYER2_WALLET: {
    currency: 'BTC',
    accountInfo: { accountType: 'LAYER2_WALLET', address: 'spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6dj6mrhu' },
    invalid: { accountInfo: { accountType: 'LAYER2_WALLET', address: 'invalid_address' }, field: 'accountInfo.address' },
  },
  CHAIN2_WALLET: {
    currency: 'USDC',
    accountInfo: { accountType: 'CHAIN2_WALLET', address: '4Nd1m6Qkq7RfKuE5vQ9qP9Tn6H94Ueqb4xXHzsAbd8Wg' },
    invalid: {
      accountInfo: { accountType: 'CHAIN2_WALLET', address: '0OIl6Qkq7RfKuE5vQ9qP9Tn6H94Ueqb4xXHzsAbd8Wg' },
      field: 'accountInfo.address',
    },
  },
  TRON_WALLET: {
    currency: 'USDT',
    accountInfo: { accountType: 'TRON_WALLET', address: 'TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL' },
    invalid: { accountInfo: { accountType: 'TRON_WALLET', address: 'XNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL' }, field: 'accountInfo.address' },
  },
  POLYGON_WALLET: {
    currency: 'USDC',
    accountInfo: { accountType: 'POLYGON_WALLET', address: EVM, vaspName: 'Kraken' },
    invalid: { accountInfo: { accountType: 'POLYGON_WALLET', address: '0x1234' }, field: 'accountInfo.address' },
  },
  BASE_WALLET: {
    currency: 'USDC',
    accountInfo: { accountType: 'BASE_WALLET', address: EVM },
    invalid: { accountInfo: { accountType: 'BASE_WALLET', address: `${EVM}00` }, field: 'accountInfo.address' },
  },
  ETHEREUM_WALLET: {
    currency: 'USDT',
    accountInfo: {
      accountType: 'ETHEREUM_WALLET',
      address: EVM,
      beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Jane Roe', countryOfResidence: 'FR' },
    },
    invalid: {
      accountInfo: { accountType: 'ETHEREUM_WALLET', address: EVM, beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Jane Roe' } },
      field: 'accountInfo.beneficiary.countryOfResidence',
    },
  },
  PLASMA_WALLET: {
    currency: 'USDT',
    accountInfo: { accountType: 'PLASMA_WALLET', address: EVM, beneficiary: { beneficiaryType: 'BUSINESS', legalName: 'Acme Ltd' } },
    invalid: { accountInfo: { accountType: 'PLASMA_WALLET', address: 'TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL' }, field: 'accountInfo.address' },
  },
  LIGHTNING: {
    currency: 'BTC',
    accountInfo: { accountType: 'LIGHTNING', lightningAddress: 'alice@wallet.example.com' },
    invalid: {
      accountInfo: { accountType: 'LIGHTNING', lightningAddress: 'alice@wallet.example.com', bolt12: 'lno1qcp4256ypqpq86q' },
      field: 'accountInfo.lightningAddress',
    },
  },
};

/** A valid CLABE ending in the given 3 digits (the last one being the check digit). */
export function clabeEnding(suffix: string): string {
  for (let i = 0; i < 10_000; i++) {
    const first17 = `0321800001${String(i).padStart(5, '0')}${suffix.slice(0, 2)}`;
    if (String(clabeCheckDigit(first17)) === suffix[2]) return first17 + suffix[2];
  }
  throw new Error(`no CLABE ends in ${suffix}`);
}

/** A US account body for the customer with the given account number (its last 3 digits steer the sandbox). */
export function usAccount(customerId: string | undefined, accountNumber: string, extra: Record<string, unknown> = {}) {
  return {
    ...(customerId ? { customerId } : {}),
    currency: 'USD',
    accountInfo: { accountType: 'US_ACCOUNT', accountNumber, routingNumber: '021000021', beneficiary: person() },
    ...extra,
  };
}

/** Creates an individual customer and returns its id. */
export async function newCustomer(api: Client, fullName = 'Jane Smith'): Promise<string> {
  const res = await api.post('/customers', {
    customerType: 'INDIVIDUAL',
    fullName,
    birthDate: '1990-01-15',
    nationality: 'US',
    email: 'jane.smith@example.com',
    address: ADDRESS,
  });
  if (res.status !== 201) throw new Error(`create customer: ${res.status} ${res.text}`);
  return res.body.id as string;
}

/** The `details.errors[].field` values of an error. */
export function fieldsOf(res: Res): string[] {
  const errs = res.body?.details?.errors;
  if (!Array.isArray(errs)) throw new Error(`no details.errors in ${res.status} ${res.text}`);
  return errs.map((e: { field: string }) => e.field);
}

/** Asserts a 400 with `code` naming `field` among its field errors. */
export function expectFieldError(res: Res, field: string, code = 'INVALID_INPUT'): Res {
  if (res.status !== 400 || res.body?.code !== code || res.body?.status !== 400) {
    throw new Error(`expected 400 ${code} on ${field}, got ${res.status} ${res.text}`);
  }
  expect(fieldsOf(res), res.text).toContain(field);
  return res;
}
