/** Request bodies the workload sends: customers and external accounts whose identifiers end in a chosen sandbox suffix. */

const ADDRESS = { line1: '123 Main Street', city: 'San Francisco', state: 'CA', postalCode: '94105', country: 'US' };

export function customerBody(n: number, currencies: string[]): Record<string, unknown> {
  return {
    customerType: 'INDIVIDUAL',
    platformCustomerId: `workload-${n}`,
    // No digits in the name: a fullName suffix would steer the sandbox KYC outcome.
    fullName: 'Jane Workload',
    birthDate: '1990-01-15',
    nationality: 'US',
    email: `workload-${n}@example.com`,
    phoneNumber: '+14155550100',
    address: ADDRESS,
    currencies,
  };
}

const BERLIN = { line1: 'Unter den Linden 1', city: 'Berlin', postalCode: '10117', country: 'DE' };

/**
 * A customer living in the EEA (Berlin): Strong Customer Authentication applies to its payments
 * (issue #23). Its phone number receives the sandbox SMS codes. Every other workload customer
 * lives in the US (customerBody), where SCA does not apply.
 */
export function scaCustomerBody(n: number): Record<string, unknown> {
  return {
    customerType: 'INDIVIDUAL',
    platformCustomerId: `workload-sca-${n}`,
    fullName: 'Erika Workload',
    birthDate: '1985-04-12',
    nationality: 'DE',
    email: `workload-sca-${n}@example.com`,
    phoneNumber: '+4915123456789',
    address: BERLIN,
    currencies: ['USD', 'EUR'],
  };
}

export type ExternalKind = 'US' | 'EUR' | 'USDB';

export const CURRENCY_OF: Record<ExternalKind, string> = { US: 'USD', EUR: 'EUR', USDB: 'USDB' };

/** A German IBAN whose account number (and so the IBAN) ends in `suffix`, with valid check digits. */
export function ibanEndingIn(serial: number, suffix: string): string {
  const bban = `37040044${String(serial).padStart(7, '0')}${suffix}`;
  // ISO 13616: move "DE00" to the end, letters as numbers (D=13, E=14), check = 98 − (n mod 97).
  const numeric = `${bban}131400`;
  let mod = 0;
  for (const ch of numeric) mod = (mod * 10 + Number(ch)) % 97;
  return `DE${String(98 - mod).padStart(2, '0')}${bban}`;
}

/** `accountInfo` of an external account of `kind` ending in `suffix` (`serial` keeps each one distinct). */
export function accountInfo(kind: ExternalKind, serial: number, suffix: string): Record<string, unknown> {
  switch (kind) {
    case 'US':
      return {
        accountType: 'US_ACCOUNT',
        accountNumber: `4455${String(serial).padStart(5, '0')}${suffix}`,
        routingNumber: '021000021',
        bankName: 'Chase Bank',
        bankAccountType: 'CHECKING',
        beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'John Doe', birthDate: '1990-01-15', nationality: 'US', address: ADDRESS },
      };
    case 'EUR':
      return {
        accountType: 'EUR_ACCOUNT',
        iban: ibanEndingIn(serial, suffix),
        swiftCode: 'DEUTDEFF',
        beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Hans Muller', countryOfResidence: 'DE' },
      };
    case 'USDB':
      return {
        accountType: 'LAYER2_WALLET',
        address: `spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6d${String(serial).padStart(4, '0')}${suffix}`,
      };
  }
}

/** The platform's currencies: bounds per transaction in the smallest unit, as the workload configures them. */
export const CURRENCY_BOUNDS: Record<string, { min: number; max: number }> = {
  USD: { min: 1, max: 100_000_000 },
  EUR: { min: 1, max: 100_000_000 },
  MXN: { min: 1, max: 2_000_000_000 },
  USDB: { min: 1, max: 1_000_000_000_000 },
};

/** The platform's cross-currency fee on USD payments (the only fee currency the API allows). */
export const USD_FEE = { fixed: 25, bps: 50 };

export function platformConfig(webhookEndpoint: string): Record<string, unknown> {
  return {
    supportedCurrencies: Object.entries(CURRENCY_BOUNDS).map(([currencyCode, b]) => ({
      currencyCode,
      minAmount: b.min,
      maxAmount: b.max,
      requiredCounterpartyFields: [],
      enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
    })),
    feeConfigs: [
      {
        feeType: 'CROSS_CURRENCY_TRANSACTION',
        sourceCurrency: 'USD',
        variableFeeBps: USD_FEE.bps,
        fixedFee: { amount: USD_FEE.fixed, currency: 'USD' },
      },
    ],
    webhookEndpoint,
  };
}
