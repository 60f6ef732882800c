/**
 * Trigger recipes for cards: a card issued (the issuer's provisioning job makes it ACTIVE), its
 * funding sources set, and card transactions through the sandbox's issuer simulations. A card is
 * PROCESSING until its provisioning job has run, and only an ACTIVE card authorizes, so the
 * transaction recipes take two units: the card, then (after the job) the issuer's messages.
 */
import type { Unit } from '../../unit.ts';
import type { WebhookType } from '../../webhook-delivery/catalogue.ts';
import { cardTransactionsForList } from '../cards/card-transactions.service.ts';
import { simulateAuthorization, simulateClearing, simulateReturn } from '../cards/card-simulations.service.ts';
import { fundingSourceMagic } from '../cards/cards.rules.ts';
import type { SandboxCardAuthorization } from '../cards/cards.schemas.ts';
import { createCard, updateCardById } from '../cards/cards.service.ts';
import { fundInternalAccount } from '../sandbox/sandbox.service.ts';
import { AMOUNT, CURRENCY, customer, ids, oneUnit, type Recipe, type TriggerCustomer } from './trigger.recipes.common.ts';

/** Customers tried for a cardholder whose account the sandbox accepts as a funding source. */
const CARDHOLDER_TRIES = 5;

/**
 * An APPROVED customer with a funded USD account that can fund a card. The sandbox refuses a
 * funding account whose id ends in 002 or 003 (a random id does, 1 time in 2,048): then another
 * customer is made, rather than a card the trigger knows will be refused.
 */
async function cardholder(u: Unit): Promise<TriggerCustomer> {
  for (let i = 0; i < CARDHOLDER_TRIES; i++) {
    const c = await customer(u);
    if (fundingSourceMagic(c.internalAccountId) !== undefined) continue;
    await fundInternalAccount(u, c.internalAccountId, AMOUNT * 10);
    return c;
  }
  throw new Error(`no card-eligible account in ${CARDHOLDER_TRIES} customers`);
}

/** A virtual card funded by the cardholder's USD account; its platformCardId ends in 100, which the issuer provisions at once. */
async function issueCard(u: Unit, c: TriggerCustomer): Promise<string> {
  const platformCardId = `trigger-${u.deps.ids.uuid().slice(-12)}-100`;
  const card = await createCard(u, { cardholderId: c.customerId, form: 'VIRTUAL', fundingSources: [c.internalAccountId], platformCardId });
  return card.id;
}

/** A purchase of `AMOUNT` at a merchant whose descriptor's last three characters steer it (006: the funding pull fails). */
const purchase = (descriptor: string): SandboxCardAuthorization => ({
  amount: AMOUNT,
  currency: { code: CURRENCY },
  merchant: { descriptor, mcc: '5814', country: 'US' },
});

/** The cardholder's card transaction: a fresh cardholder has exactly one. */
async function onlyCardTransaction(u: Unit, customerId: string): Promise<string> {
  const { rows } = await cardTransactionsForList(u.trx, u.platform.id, { customerId }, { limit: 1, afterUuid: undefined, order: 'desc' });
  if (!rows[0]) throw new Error(`the authorization for ${customerId} made no card transaction`);
  return rows[0].id;
}

/**
 * A card issued (first unit), provisioned by its job, then the issuer's messages `act` sends (second
 * unit) on the one transaction its first authorization makes.
 */
function cardTransaction(how: string, act: (u: Unit, cardId: string, txId: () => Promise<string>) => Promise<void>): Recipe {
  return {
    how: `a card issued to a funded customer and provisioned, then ${how}`,
    clockMs: 0,
    async run(s) {
      const { c, cardId } = await s.unit(async (u) => {
        const holder = await cardholder(u);
        return { c: holder, cardId: await issueCard(u, holder) };
      });
      await s.settle();
      const cardTransactionId = await s.unit(async (u) => {
        await act(u, cardId, () => onlyCardTransaction(u, c.customerId));
        return onlyCardTransaction(u, c.customerId);
      });
      return { created: { ...ids(c), cardId, cardTransactionId }, resourceId: cardTransactionId };
    },
  };
}

/** An authorization the issuer approves (a decline makes no transaction: a bug in the recipe, not the caller's). */
async function authorize(u: Unit, cardId: string, descriptor = 'TRIGGER COFFEE SF'): Promise<void> {
  const outcome = await simulateAuthorization(u, cardId, 'AUTHORIZATION', purchase(descriptor));
  if (outcome.decision !== 'APPROVED') throw new Error(`trigger: the authorization on ${cardId} was declined (${outcome.declineReason})`);
}

export const CARD_RECIPES: Partial<Record<WebhookType, Recipe>> = {
  'CARD.STATE_CHANGE': oneUnit('a card issued to a funded customer; the issuer provisions it (PROCESSING → ACTIVE)', async (u) => {
    const c = await cardholder(u);
    const cardId = await issueCard(u, c);
    return { created: { ...ids(c), cardId }, resourceId: cardId };
  }),
  'CARD.FUNDING_SOURCE_CHANGE': oneUnit(
    "a card issued to a funded customer, whose fundingSources are then set (PATCH /cards/{id}) to the customer's USD account",
    async (u) => {
      const c = await cardholder(u);
      const cardId = await issueCard(u, c);
      await updateCardById(u, cardId, { fundingSources: [c.internalAccountId] });
      return { created: { ...ids(c), cardId }, resourceId: cardId };
    },
  ),
  'CARD_TRANSACTION.AUTHORIZED': cardTransaction('an authorization (the amount held)', async (u, cardId) => {
    await authorize(u, cardId);
  }),
  'CARD_TRANSACTION.PARTIALLY_SETTLED': cardTransaction('an authorization and a clearing of half of it', async (u, cardId, txId) => {
    await authorize(u, cardId);
    await simulateClearing(u, cardId, { cardTransactionId: await txId(), amount: AMOUNT / 2 });
  }),
  'CARD_TRANSACTION.SETTLED': cardTransaction('an authorization cleared in full', async (u, cardId, txId) => {
    await authorize(u, cardId);
    await simulateClearing(u, cardId, { cardTransactionId: await txId(), amount: AMOUNT });
  }),
  'CARD_TRANSACTION.REFUNDED': cardTransaction(
    'an authorization cleared in full, then returned in full by the merchant',
    async (u, cardId, txId) => {
      await authorize(u, cardId);
      const cardTransactionId = await txId();
      await simulateClearing(u, cardId, { cardTransactionId, amount: AMOUNT });
      await simulateReturn(u, cardId, { cardTransactionId, amount: AMOUNT });
    },
  ),
  'CARD_TRANSACTION.EXCEPTION': cardTransaction(
    'an authorization at a merchant whose descriptor ends in 006: the funding pull fails (EXCEPTION, PULL_FAILED)',
    async (u, cardId) => {
      await authorize(u, cardId, 'TRIGGER MERCHANT 006');
    },
  ),
};
