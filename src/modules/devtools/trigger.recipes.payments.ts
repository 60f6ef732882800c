/**
 * Trigger recipes for money movement and accounts: outgoing payments (quotes executed to a bank
 * account whose number carries the sandbox outcome), pulls (transfer-in), funding, and deleting a
 * bank account. Each is one unit of work.
 */
import type { Unit } from '../../unit.ts';
import type { WebhookType } from '../../webhook-delivery/catalogue.ts';
import { deleteExternalAccount } from '../external-accounts/external-accounts.service.ts';
import type { QuoteCreate } from '../payments/payments.schemas.ts';
import { createQuote, QUOTE_TTL_MS } from '../payments/quotes.service.ts';
import { transferIn } from '../payments/transfers.service.ts';
import { fundInternalAccount } from '../sandbox/sandbox.service.ts';
import {
  AMOUNT,
  type CustomerOverrides,
  customer,
  ids,
  oneUnit,
  type Recipe,
  type RecipeResult,
  usAccount,
} from './trigger.recipes.common.ts';

/** A Berlin address: the customer is an SCA customer (EEA), so a payment to a new payee waits for its authorisation. */
const SCA_CUSTOMER: CustomerOverrides = {
  address: { line1: 'Unter den Linden 1', city: 'Berlin', postalCode: '10117', country: 'DE' },
  nationality: 'DE',
  phoneNumber: '+4915123456789',
};

/** A funded customer paying `AMOUNT` to its bank account ending in `suffix` (executed at once unless `execute` is false). */
async function pay(u: Unit, suffix: string, execute: boolean, who: CustomerOverrides = {}): Promise<RecipeResult> {
  const c = await customer(u, '', who);
  await fundInternalAccount(u, c.internalAccountId, AMOUNT * 10);
  const externalAccountId = await usAccount(u, c.customerId, suffix);
  const body = {
    source: { sourceType: 'ACCOUNT', accountId: c.internalAccountId },
    destination: { destinationType: 'ACCOUNT', accountId: externalAccountId },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: AMOUNT,
    description: 'corridor trigger',
    immediatelyExecute: execute,
  } as QuoteCreate;
  const quote = await createQuote(u, body);
  return {
    created: { ...ids(c), externalAccountId, quoteId: quote.id, transactionId: quote.transactionId },
    resourceId: quote.transactionId,
  };
}

function outgoing(suffix: string, how: string, execute = true, clockMs = 0): Recipe {
  return oneUnit(
    `${how} (customer, USD account funded, bank account ending ${suffix}, quote${execute ? ' executed' : ''})`,
    (u) => pay(u, suffix, execute),
    clockMs,
  );
}

/** A customer pulling `AMOUNT` from its bank account ending in `suffix` (POST /transfer-in). */
function incoming(suffix: string, how: string): Recipe {
  return oneUnit(`${how} (customer, bank account ending ${suffix}, transfer-in)`, async (u) => {
    const c = await customer(u);
    const externalAccountId = await usAccount(u, c.customerId, suffix);
    const t = await transferIn(u, {
      source: { accountId: externalAccountId },
      destination: { accountId: c.internalAccountId },
      amount: AMOUNT,
    });
    return { created: { ...ids(c), externalAccountId, transactionId: t.id }, resourceId: t.id };
  });
}

// Quote destinations by suffix: 001 settles, 002 fails and is refunded, 007 fails and so does its refund.
export const PAYMENT_RECIPES: Partial<Record<WebhookType, Recipe>> = {
  'INTERNAL_ACCOUNT.BALANCE_UPDATED': oneUnit('a customer whose USD account is funded', async (u) => {
    const c = await customer(u);
    await fundInternalAccount(u, c.internalAccountId, AMOUNT);
    return { created: ids(c), resourceId: c.internalAccountId };
  }),
  'EXTERNAL_ACCOUNT.STATUS_UPDATED': oneUnit('a customer bank account that is then deleted (status INACTIVE)', async (u) => {
    const c = await customer(u);
    const externalAccountId = await usAccount(u, c.customerId, '001');
    await deleteExternalAccount(u, externalAccountId, 'any');
    return { created: { ...ids(c), externalAccountId }, resourceId: externalAccountId };
  }),
  'OUTGOING_PAYMENT.PENDING': outgoing('001', 'a payment'),
  'OUTGOING_PAYMENT.PENDING_AUTHORIZATION': oneUnit(
    'a payment by an SCA customer (address in Berlin) to a new payee, waiting for its authorisation: the quote carries ' +
      'the scaChallenge; authorise it with POST /quotes/{id}/authorize, or it fails with SCA_NOT_COMPLETED when the challenge lapses',
    (u) => pay(u, '001', true, SCA_CUSTOMER),
  ),
  'OUTGOING_PAYMENT.PROCESSING': outgoing('001', 'a payment'),
  'OUTGOING_PAYMENT.COMPLETED': outgoing('001', 'a payment that settles'),
  'OUTGOING_PAYMENT.FAILED': outgoing('002', 'a payment that fails (QUOTE_EXECUTION_FAILED)'),
  'OUTGOING_PAYMENT.REFUND_PENDING': outgoing('002', 'a failed payment whose refund starts'),
  'OUTGOING_PAYMENT.REFUND_COMPLETED': outgoing('002', 'a failed payment that is refunded'),
  'OUTGOING_PAYMENT.REFUND_FAILED': outgoing('007', 'a failed payment whose refund fails too'),
  'OUTGOING_PAYMENT.EXPIRED': outgoing(
    '001',
    'a quote left unexecuted until it expires; the sandbox clock moves 5 minutes',
    false,
    QUOTE_TTL_MS + 1_000,
  ),
  'INCOMING_PAYMENT.PENDING': incoming('001', 'a pull from a bank account'),
  'INCOMING_PAYMENT.COMPLETED': incoming('001', 'a pull from a bank account that settles'),
  'INCOMING_PAYMENT.FAILED': incoming('004', 'a pull the bank refuses (COLLECTION_FAILED)'),
};
