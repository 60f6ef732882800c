/**
 * The valid request each operation's hostile cases are derived from: path ids from the world and a
 * body that passes the document's schema, so that each mutation is (usually) the one thing wrong
 * with a request and the server's deeper checks are reached. Bodies are hand-written for the
 * operations the project knows; any other operation gets one sampled from its schema.
 */
import { ADMIN_TOKEN } from '../server.ts';
import { basicHeader } from '../http.ts';
import { keyPair } from '../wallet-auth.ts';
import { ownerBody } from '../kyc.ts';
import { usAccountInfo } from '../payments.ts';
import { bodyValid, type Operation } from './operations.ts';
import { sample } from './values.ts';
import type { Slot, World } from './world.ts';

/** Which world slot fills a path parameter of an operation (undefined: the fuzzer does not know it yet). */
export function pathSlot(op: Operation, name: string): Slot | undefined {
  const p = op.path;
  switch (name) {
    case 'tokenId':
      return 'token';
    case 'customerId':
      return 'customer';
    case 'beneficialOwnerId':
      return 'owner';
    case 'documentId':
      return 'document';
    case 'verificationId':
      return 'verification';
    case 'accountId':
      return p.includes('/receiver/') ? 'external' : 'usdAccount';
    case 'receiverUmaAddress':
      return 'umaReceiver';
    case 'webhookId':
      return 'webhook';
    case 'actionId':
      return 'action';
    case 'code':
      return 'deviceCode';
    case 'invitationCode':
      return 'invitation';
    case 'jobId':
      return 'bulkJob';
    // SCA: the world's customer is not an SCA customer, so these answer 409 (or 404) either way.
    case 'credentialId':
      return 'credential';
    case 'resetId':
      return 'verification';
    case 'stablecoinProviderAccountId':
      return 'stablecoinLink';
    case 'stablecoinId':
      return 'stablecoin';
    case 'stablecoinOperationId':
      return 'stablecoinOperation';
    case 'externalAccountId':
      return p.includes('/platform/') ? 'platformExternal' : 'external';
    case 'quoteId':
      if (p.includes('/agents/me/')) return 'agentQuote';
      // Execution needs a wallet signature for a wallet-funded quote: the signature cases matter there.
      return p.endsWith('/execute') ? 'walletQuote' : 'quote';
    case 'transactionId':
      return p.includes('/agents/me/') ? 'agentTx' : 'txOut';
    case 'agentId':
      return p.includes('/actions/') ? 'agentApproval' : 'agent';
    case 'id':
      if (p.includes('/cards/')) return 'card';
      if (p.includes('/auth/credentials/')) return 'credential';
      if (p.includes('/auth/sessions/')) return 'session';
      if (p.includes('/auth/delegated-keys/')) return 'delegatedKey';
      if (p.includes('/internal-accounts/')) return 'walletAccount';
      break;
  }
  return undefined;
}

/** Stands in for a path parameter without a slot (a test reports every such parameter). */
export const UNKNOWN_SLOT: Slot = 'customer';

export function pathValues(op: Operation, w: World): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of op.pathParams) out[p.name] = encodeURIComponent(w.ids[pathSlot(op, p.name) ?? UNKNOWN_SLOT]);
  return out;
}

/** The Authorization header of the operation's scheme for a world. */
export function authHeader(op: Operation, w: World): Record<string, string> {
  switch (op.auth) {
    case 'basic':
      return { authorization: basicHeader(w.platform.creds) };
    case 'agent':
      return w.agentToken ? { authorization: `Bearer ${w.agentToken}` } : {};
    case 'admin':
      return { authorization: `Bearer ${ADMIN_TOKEN}` };
    case 'none':
      return {};
  }
}

const CLIENT_KEY = keyPair();

const quote = (w: World) => ({
  source: { sourceType: 'ACCOUNT', accountId: w.ids.usdAccount },
  destination: { destinationType: 'ACCOUNT', accountId: w.ids.external },
  lockedCurrencySide: 'SENDING',
  lockedCurrencyAmount: 1_000,
  description: 'fuzz',
});

const HAND: Record<string, (w: World) => unknown> = {
  adminCreatePlatform: () => ({ name: 'Fuzz platform', currency: 'USD', environment: 'SANDBOX' }),
  createToken: () => ({ name: 'fuzz token', permissions: ['VIEW', 'TRANSACT'] }),
  updatePlatformConfig: () => ({
    supportedCurrencies: [
      {
        currencyCode: 'USD',
        minAmount: 1,
        maxAmount: 100_000_000,
        requiredCounterpartyFields: [],
        enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
      },
      {
        currencyCode: 'USDB',
        minAmount: 1,
        maxAmount: 100_000_000,
        requiredCounterpartyFields: [],
        enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
      },
    ],
  }),
  createCustomer: () => ({
    customerType: 'INDIVIDUAL',
    platformCustomerId: 'fuzz-customer',
    fullName: 'Jane Smith',
    birthDate: '1990-01-15',
    nationality: 'US',
    email: 'jane@example.com',
    address: { line1: '1 Main Street', city: 'San Francisco', state: 'CA', postalCode: '94105', country: 'US' },
    currencies: ['USD'],
  }),
  // A new email for the world's wallet customer, whose EMAIL_OTP credential signs in with it: a
  // signed retry (202 first), so the signature cases matter here (contact-change.service.ts).
  updateCustomerById: () => ({
    customerType: 'INDIVIDUAL',
    fullName: 'Jane Q. Smith',
    email: 'fuzz.moved@example.com',
    address: { line1: '2 Main Street', city: 'San Francisco', postalCode: '94105', country: 'US' },
  }),
  createCustomerExternalAccount: (w) => ({ customerId: w.ids.customer, currency: 'USD', accountInfo: usAccountInfo('001') }),
  createPlatformExternalAccount: () => ({ currency: 'USD', accountInfo: usAccountInfo('001') }),
  agentCreateExternalAccount: () => ({ currency: 'USD', accountInfo: usAccountInfo('001') }),
  createBeneficialOwner: (w) => ownerBody(w.ids.business),
  updateBeneficialOwner: () => ({
    roles: ['UBO'],
    ownershipPercentage: 30,
    personalInfo: {
      firstName: 'Janet',
      lastName: 'Smith',
      birthDate: '1978-06-15',
      nationality: 'US',
      address: { line1: '9 Elm Street', city: 'Seattle', postalCode: '98101', country: 'US' },
      idType: 'SSN',
      identifier: '123-45-6789',
    },
  }),
  createVerification: (w) => ({ customerId: w.ids.business }),
  sandboxFundInternalAccount: () => ({ amount: 100 }),
  sandboxAdvanceClock: () => ({ seconds: 1 }),
  // Events and files that move no money: MANAGE alone may send them (a payment or a balance needs TRANSACT too).
  sandboxTriggerEvent: () => ({ eventType: 'CUSTOMER.KYC_APPROVED' }),
  sandboxLoadFixtures: () => ({ version: 1 }),
  sendTestWebhook: () => ({}),
  createQuote: quote,
  agentCreateQuote: quote,
  executeQuote: () => ({}),
  agentExecuteQuote: () => ({}),
  createTransferIn: (w) => ({ source: { accountId: w.ids.external }, destination: { accountId: w.ids.usdAccount }, amount: 100 }),
  agentCreateTransferIn: (w) => ({ source: { accountId: w.ids.external }, destination: { accountId: w.ids.usdAccount }, amount: 100 }),
  createTransferOut: (w) => ({ source: { accountId: w.ids.usdAccount }, destination: { accountId: w.ids.external }, amount: 100 }),
  agentCreateTransferOut: (w) => ({ source: { accountId: w.ids.usdAccount }, destination: { accountId: w.ids.external }, amount: 100 }),
  cancelTransaction: () => ({}),
  confirmReceiptDelivery: () => ({ receiptDeliveryConfirmedAt: '2030-01-01T00:00:00.000Z' }),
  approvePendingPayment: () => ({}),
  rejectPendingPayment: () => ({ reason: 'fuzz' }),
  sandboxSend: (w) => ({ quoteId: w.ids.quote, currencyCode: 'USD', currencyAmount: 1_000 }),
  sandboxReceive: (w) => ({
    senderUmaAddress: '$fuzz@example.com',
    customerId: w.ids.customer,
    receivingCurrencyCode: 'USD',
    receivingCurrencyAmount: 100,
  }),
  replayWebhookDelivery: () => ({}),
  recoverWebhookDeliveries: () => ({ since: '2020-01-01T00:00:00.000Z' }),
  createAuthCredential: (w) => ({ type: 'EMAIL_OTP', accountId: w.ids.walletAccount }),
  challengeAuthCredential: () => ({}),
  verifyAuthCredential: () => ({
    type: 'EMAIL_OTP',
    encryptedOtpBundle: JSON.stringify({ encappedPublic: '04'.padEnd(130, '1'), ciphertext: 'ab'.repeat(40) }),
  }),
  refreshAuthSession: () => ({ clientPublicKey: CLIENT_KEY.publicKey }),
  exportInternalAccount: () => ({ clientPublicKey: CLIENT_KEY.publicKeyUncompressed }),
  updateInternalAccount: () => ({ privateEnabled: true }),
  createDelegatedKey: (w) => ({
    cardId: 'Card:019542f5-b3e7-7d02-8000-000000000010',
    internalAccountId: w.ids.walletAccount,
    nickname: 'fuzz key',
  }),
  createAgent: (w) => ({
    name: 'Fuzz agent',
    customerId: w.ids.customer,
    policy: {
      permissions: ['VIEW_TRANSACTIONS', 'CREATE_QUOTES'],
      defaultExecutionMode: 'AUTO',
      spendingLimits: { currency: 'USD', perTransactionLimit: 1_000 },
    },
  }),
  updateAgent: () => ({ name: 'Fuzz agent renamed' }),
  updateAgentPolicy: () => ({ defaultExecutionMode: 'AUTO', spendingLimits: { currency: 'USD', perTransactionLimit: 2_000 } }),
  regenerateAgentDeviceCode: () => ({}),
  approveAgentAction: () => ({}),
  rejectAgentAction: () => ({ reason: 'fuzz' }),
  redeemAgentDeviceCode: () => ({}),
  estimateCryptoWithdrawalFee: (w) => ({
    internalAccountId: w.ids.walletAccount,
    currency: 'USDB',
    cryptoNetwork: 'SPARK',
    amount: 1_000,
    destinationAddress: 'spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6d0001',
  }),
  createInvitation: (w) => ({ inviterUma: w.inviterUma, firstName: 'Fuzz', amountToSend: 1_000, expiresAt: '2099-01-01T00:00:00.000Z' }),
  claimInvitation: () => ({ inviteeUma: '$fuzz.invitee@vasp.example' }),
  cancelInvitation: () => ({}),
};

/** Multipart text fields of the document operations (the file part is added by the encoder). */
export function documentFields(op: Operation, w: World): Record<string, string> {
  // The bulk customer import's form is its file alone (request.ts sends a CSV there).
  if (op.operationId === 'uploadCustomersCsv') return {};
  const f: Record<string, string> = { documentType: 'UTILITY_BILL', country: 'US' };
  if (op.operationId === 'uploadDocument' || !op.pathParams.length) f.documentHolder = w.ids.business;
  return f;
}

export interface Baseline {
  body: unknown;
  /** hand, sampled, or none (the hand body and the sample both fail the schema). */
  source: 'hand' | 'sampled' | 'none';
}

export function baselineBody(op: Operation, w: World): Baseline | undefined {
  if (!op.body) return undefined;
  if (op.body.contentType === 'multipart/form-data') return { body: documentFields(op, w), source: 'hand' };
  const hand = HAND[op.operationId]?.(w);
  if (hand !== undefined && bodyValid(op, hand)) return { body: hand, source: 'hand' };
  const sampled = sample(op.body.schema, w);
  if (bodyValid(op, sampled)) return { body: sampled, source: 'sampled' };
  return { body: hand ?? sampled, source: 'none' };
}
