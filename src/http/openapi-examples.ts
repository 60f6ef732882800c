/**
 * Example request and response bodies of the main operations, shown by /docs and carried by the
 * OpenAPI document (`example` of each JSON media type; see openapi-enrich.ts), keyed by operationId.
 *
 * Taken from a real sandbox run (one customer paying a EUR account from a funded USD account), with
 * the run's ids and times replaced by fixed ones. test/docs/examples.test.ts validates every example
 * against its operation's schema in the served document, and sends the request examples that need
 * no earlier object to a real server — so an example that stops matching the API fails a test.
 */

/** The examples of one operation: the request body and responses by status. */
export interface OperationExamples {
  request?: unknown;
  responses?: Readonly<Record<string, unknown>>;
}

const id = (type: string, n: number) => `${type}:019542f5-b3e7-7d02-8000-${String(n).padStart(12, '0')}`;
const CUSTOMER = id('Customer', 1);
const CUSTOMER_ACCOUNT = id('InternalAccount', 1);
const PLATFORM_ACCOUNT = id('InternalAccount', 2);
const CUSTOMER_BANK = id('ExternalAccount', 1);
const SUPPLIER_IBAN = id('ExternalAccount', 2);
const QUOTE = id('Quote', 1);
const AT = '2025-10-13T10:00:40.000Z';

const USD = { code: 'USD', name: 'United States Dollar', symbol: '$', decimals: 2 };
const EUR = { code: 'EUR', name: 'Euro', symbol: '€', decimals: 2 };
const ADDRESS = { line1: '123 Main Street', city: 'San Francisco', state: 'CA', postalCode: '94105', country: 'US' };

const CUSTOMER_REQUEST = {
  customerType: 'INDIVIDUAL',
  platformCustomerId: 'user-4821',
  region: 'US',
  currencies: ['USD'],
  fullName: 'Jane Smith',
  birthDate: '1990-04-12',
  nationality: 'US',
  email: 'jane.smith@example.com',
  address: ADDRESS,
};
const { customerType: _type, ...customerFields } = CUSTOMER_REQUEST;
const CUSTOMER_BODY = {
  id: CUSTOMER,
  ...customerFields,
  umaAddress: '$user-4821@p0a1b2c3d4e5.corridor.localhost',
  createdAt: AT,
  updatedAt: AT,
  isDeleted: false,
  customerType: 'INDIVIDUAL',
  kycStatus: 'APPROVED',
};

/** An internal USD account holding `amount` cents. */
function usdAccount(accountId: string, amount: number, holder: string, customerId?: string) {
  const money = { amount, currency: USD };
  return {
    id: accountId,
    type: 'INTERNAL_FIAT',
    status: 'ACTIVE',
    balance: money,
    totalBalance: money,
    fundingPaymentInstructions: [
      {
        instructionsNotes: 'Include the reference CRD-33YKN9CZYM in the transfer memo',
        accountOrWalletInfo: {
          accountType: 'US_ACCOUNT',
          reference: 'CRD-33YKN9CZYM',
          paymentRails: ['ACH', 'WIRE', 'RTP', 'FEDNOW'],
          accountHolderName: holder,
          accountNumber: '463561504768',
          routingNumber: '123456780',
          bankName: 'Corridor Sandbox Bank',
        },
        isPlatformAccount: customerId === undefined,
      },
    ],
    createdAt: AT,
    updatedAt: AT,
    ...(customerId ? { customerId } : {}),
  };
}

const US_BANK_INFO = {
  accountType: 'US_ACCOUNT',
  accountNumber: '123456789',
  routingNumber: '021000021',
  bankName: 'Chase Bank',
  bankAccountType: 'CHECKING',
  beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Jane Smith', birthDate: '1990-04-12', nationality: 'US', address: ADDRESS },
};
const CUSTOMER_BANK_REQUEST = { customerId: CUSTOMER, currency: 'USD', accountInfo: US_BANK_INFO };
const CUSTOMER_BANK_BODY = {
  id: CUSTOMER_BANK,
  status: 'ACTIVE',
  currency: 'USD',
  accountInfo: { ...US_BANK_INFO, paymentRails: ['ACH', 'WIRE', 'RTP', 'FEDNOW'] },
  createdAt: AT,
  updatedAt: AT,
  customerId: CUSTOMER,
  defaultUmaDepositAccount: false,
  beneficiaryVerificationStatus: 'MATCHED',
  beneficiaryVerifiedData: { fullName: 'Jane Smith' },
};

const IBAN_INFO = {
  accountType: 'EUR_ACCOUNT',
  iban: 'DE89370400440532013000',
  swiftCode: 'DEUTDEFF',
  beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Hans Müller', countryOfResidence: 'DE' },
};
const IBAN_REQUEST = { currency: 'EUR', accountInfo: IBAN_INFO };
const IBAN_BODY = {
  id: SUPPLIER_IBAN,
  status: 'ACTIVE',
  currency: 'EUR',
  accountInfo: { ...IBAN_INFO, paymentRails: ['SEPA', 'SEPA_INSTANT'] },
  createdAt: AT,
  updatedAt: AT,
  beneficiaryVerificationStatus: 'MATCHED',
  beneficiaryVerifiedData: { fullName: 'Hans Müller' },
};

const QUOTE_REQUEST = {
  source: { sourceType: 'ACCOUNT', accountId: CUSTOMER_ACCOUNT },
  destination: { destinationType: 'ACCOUNT', accountId: SUPPLIER_IBAN },
  lockedCurrencySide: 'SENDING',
  lockedCurrencyAmount: 10000,
  description: 'Invoice 1042',
};
const QUOTE_BODY = {
  id: QUOTE,
  status: 'PENDING',
  createdAt: AT,
  expiresAt: '2025-10-13T10:05:40.000Z',
  source: QUOTE_REQUEST.source,
  destination: QUOTE_REQUEST.destination,
  sendingCurrency: USD,
  receivingCurrency: EUR,
  totalSendingAmount: 10000,
  totalReceivingAmount: 9263,
  exchangeRate: 0.9263613157,
  feesIncluded: 0,
  platformFeesIncluded: 0,
  transactionId: id('Transaction', 1),
  rateDetails: {
    counterpartyMultiplier: 0.9263613157,
    counterpartyFixedFee: 0,
    gridApiMultiplier: 1,
    gridApiFixedFee: 0,
    gridApiVariableFeeRate: 0,
    gridApiVariableFeeAmount: 0,
  },
  description: 'Invoice 1042',
};

/** A same-currency transfer between the customer's internal account and bank account. */
function transfer(n: number, outgoing: boolean, amount: number, reference: string) {
  const [from, to] = outgoing ? [CUSTOMER_ACCOUNT, CUSTOMER_BANK] : [CUSTOMER_BANK, CUSTOMER_ACCOUNT];
  const money = { amount, currency: USD };
  return {
    id: id('Transaction', n),
    status: 'PENDING',
    type: outgoing ? 'OUTGOING' : 'INCOMING',
    direction: 'DEBIT',
    source: { sourceType: 'ACCOUNT', accountId: from, currency: 'USD' },
    destination: { destinationType: 'ACCOUNT', accountId: to, currency: 'USD' },
    customerId: CUSTOMER,
    platformCustomerId: 'user-4821',
    sentAmount: money,
    receivedAmount: money,
    fees: 0,
    platformFees: 0,
    exchangeRate: 1,
    paymentRail: 'ACH',
    reconciliationInstructions: { reference },
    createdAt: AT,
    updatedAt: AT,
    ...(outgoing ? { railSelectionMode: 'AUTO', expectedSettlementAt: null, settlementTimelineSeconds: null } : {}),
  };
}
const TRANSFER_OUT = transfer(2, true, 2500, 'CRD-4ZFSC5NEQE');
const TRANSFER_IN = transfer(3, false, 1500, 'CRD-P45YW43VV8');

/** The cursor the list operations return for a page ending at `lastId` (opaque to clients). */
const cursorAfter = (lastId: string) => Buffer.from(JSON.stringify({ id: lastId })).toString('base64url');

const ERROR_400 = {
  status: 400,
  code: 'INVALID_INPUT',
  message: 'Invalid body: amount must be >= 1',
  details: { errors: [{ field: 'amount', message: 'must be >= 1' }] },
};

export const OPERATION_EXAMPLES: Readonly<Record<string, OperationExamples>> = {
  createCustomer: { request: CUSTOMER_REQUEST, responses: { '201': CUSTOMER_BODY } },
  getCustomerById: { responses: { '200': CUSTOMER_BODY } },
  listCustomers: { responses: { '200': { data: [CUSTOMER_BODY], hasMore: false, totalCount: 1 } } },
  listCustomerInternalAccounts: {
    responses: { '200': { data: [usdAccount(CUSTOMER_ACCOUNT, 0, 'Jane Smith', CUSTOMER)], hasMore: false, totalCount: 1 } },
  },
  listPlatformInternalAccounts: { responses: { '200': { data: [usdAccount(PLATFORM_ACCOUNT, 0, 'Example Bank')] } } },
  sandboxFundInternalAccount: {
    request: { amount: 100000 },
    responses: { '200': usdAccount(CUSTOMER_ACCOUNT, 100000, 'Jane Smith', CUSTOMER), '400': ERROR_400 },
  },
  createCustomerExternalAccount: { request: CUSTOMER_BANK_REQUEST, responses: { '201': CUSTOMER_BANK_BODY } },
  getCustomerExternalAccountById: { responses: { '200': CUSTOMER_BANK_BODY } },
  listCustomerExternalAccounts: { responses: { '200': { data: [CUSTOMER_BANK_BODY], hasMore: false, totalCount: 1 } } },
  createPlatformExternalAccount: { request: IBAN_REQUEST, responses: { '201': IBAN_BODY } },
  getPlatformExternalAccountById: { responses: { '200': IBAN_BODY } },
  createQuote: { request: QUOTE_REQUEST, responses: { '201': QUOTE_BODY } },
  getQuoteById: { responses: { '200': QUOTE_BODY } },
  executeQuote: { responses: { '200': { ...QUOTE_BODY, status: 'PROCESSING' } } },
  createTransferOut: {
    request: { source: { accountId: CUSTOMER_ACCOUNT }, destination: { accountId: CUSTOMER_BANK }, amount: 2500 },
    responses: { '201': TRANSFER_OUT },
  },
  createTransferIn: {
    request: { source: { accountId: CUSTOMER_BANK }, destination: { accountId: CUSTOMER_ACCOUNT }, amount: 1500 },
    responses: { '201': TRANSFER_IN },
  },
  getTransactionById: { responses: { '200': TRANSFER_OUT } },
  listTransactions: {
    responses: { '200': { data: [TRANSFER_IN], hasMore: true, totalCount: 3, nextCursor: cursorAfter(TRANSFER_IN.id) } },
  },
  sandboxGetClock: { responses: { '200': { now: AT, offsetMs: 0 } } },
  sandboxAdvanceClock: { request: { seconds: 3600 }, responses: { '200': { now: '2025-10-13T11:00:40.000Z', offsetMs: 3600000 } } },
  getWebhookSigningKey: {
    responses: {
      '200': {
        publicKey:
          '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEeOfCM5aMZgreWwlXDgsqsYZwTWp3\nZoCrtGKLOWnCmupZppiFMlxA7oQK21Ymk3fcFSH8lcZuOgbGIh4YOcNkWg==\n-----END PUBLIC KEY-----\n',
        algorithm: 'ECDSA_P256_SHA256',
      },
    },
  },
  listWebhookDeliveries: {
    responses: {
      '200': {
        data: [
          {
            id: id('Webhook', 1),
            type: 'INTERNAL_ACCOUNT.BALANCE_UPDATED',
            resourceId: CUSTOMER_ACCOUNT,
            status: 'PENDING',
            createdAt: AT,
            attemptCount: 0,
          },
        ],
        hasMore: true,
        totalCount: 15,
        nextCursor: cursorAfter(id('Webhook', 1)),
      },
    },
  },
  sendTestWebhook: {
    responses: {
      '400': {
        status: 400,
        code: 'WEBHOOK_ENDPOINT_NOT_SET',
        message: 'No webhook endpoint is configured; set webhookEndpoint with PATCH /config',
      },
    },
  },
};
