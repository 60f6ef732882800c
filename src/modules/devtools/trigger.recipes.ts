/**
 * `POST /sandbox/trigger` recipes: for each webhook event type that can be made to happen, the
 * objects it needs, created through the same services the API's routes and jobs call, with the
 * sandbox magic value that steers the outcome. Nothing here writes an event itself: the services
 * emit exactly what the API would. The recipes are by area, in trigger.recipes.<area>.ts; the types
 * and the shared customer in trigger.recipes.common.ts.
 */
import { errors } from '../../http/errors.ts';
import type { WebhookType } from '../../webhook-delivery/catalogue.ts';
import { AGENT_RECIPES } from './trigger.recipes.agents.ts';
import { CARD_RECIPES } from './trigger.recipes.cards.ts';
import type { Recipe } from './trigger.recipes.common.ts';
import { CUSTOMER_RECIPES } from './trigger.recipes.customers.ts';
import { PAYMENT_RECIPES } from './trigger.recipes.payments.ts';

export type { Created, Recipe, RecipeResult, Steps } from './trigger.recipes.common.ts';

export const RECIPES: Partial<Record<WebhookType, Recipe>> = {
  ...CUSTOMER_RECIPES,
  ...PAYMENT_RECIPES,
  ...CARD_RECIPES,
  ...AGENT_RECIPES,
};

/** No flow of Corridor emits these (yet): the catalogue lists them so receivers can be written against the full list. */
const NOTHING_EMITS_IT = 'no flow of Corridor emits it yet (the catalogue lists it for receivers)';

/** Why an event type in the catalogue has no recipe (docs/decisions.md, "`corridor trigger` and fixtures"). */
const NOT_TRIGGERABLE: Partial<Record<WebhookType, string>> = {
  TEST: 'send it with POST /sandbox/webhooks/test',
  'INCOMING_PAYMENT.REFUND_PENDING': `${NOTHING_EMITS_IT}: a failed incoming payment is reversed, not refunded`,
  'INCOMING_PAYMENT.REFUND_COMPLETED': `${NOTHING_EMITS_IT}: a failed incoming payment is reversed, not refunded`,
  'INCOMING_PAYMENT.REFUND_FAILED': `${NOTHING_EMITS_IT}: a failed incoming payment is reversed, not refunded`,
  'INTERNAL_ACCOUNT.STATUS_UPDATED': `${NOTHING_EMITS_IT}: internal accounts never change status`,
  'INTERNAL_ACCOUNT.FUNDING_INSTRUCTIONS_UPDATED': `${NOTHING_EMITS_IT}: funding instructions are fixed when the account is made`,
  'VERIFICATION.IN_PROGRESS': `${NOTHING_EMITS_IT}: a sandbox verification is decided when it is submitted`,
  'VERIFICATION.READY_FOR_VERIFICATION': `${NOTHING_EMITS_IT}: a sandbox verification is decided when it is submitted`,
};

/**
 * The recipes that move no money: they create customers, verifications, an invitation, a bulk
 * upload or a bank account (MANAGE's). Every other recipe funds an account or pays (TRANSACT as
 * well); a new recipe is taken to move money until it is listed here (fail closed).
 */
const MOVES_NO_MONEY: ReadonlySet<WebhookType> = new Set<WebhookType>([
  'CUSTOMER.KYC_APPROVED',
  'CUSTOMER.KYC_PENDING',
  'CUSTOMER.KYC_REJECTED',
  'CUSTOMER.KYB_APPROVED',
  'CUSTOMER.KYB_PENDING',
  'CUSTOMER.KYB_REJECTED',
  'VERIFICATION.APPROVED',
  'VERIFICATION.PENDING_MANUAL_REVIEW',
  'VERIFICATION.REJECTED',
  'VERIFICATION.RESOLVE_ERRORS',
  'BULK_UPLOAD.COMPLETED',
  'BULK_UPLOAD.FAILED',
  'INVITATION.CLAIMED',
  'EXTERNAL_ACCOUNT.STATUS_UPDATED',
]);

/** Whether the recipe for `type` funds an account or moves money (the caller then needs TRANSACT). */
export function triggerMovesMoney(type: WebhookType): boolean {
  return !MOVES_NO_MONEY.has(type);
}

/** The recipe for `type`, or the 400 saying it cannot be triggered (the caller checked it is in the catalogue). */
export function recipeFor(type: WebhookType): Recipe {
  const recipe = RECIPES[type];
  if (recipe) return recipe;
  const supported = Object.keys(RECIPES);
  const why = NOT_TRIGGERABLE[type] ?? 'it needs a flow the trigger does not drive yet';
  throw errors.coded(400, 'INVALID_INPUT', `${type} cannot be triggered: ${why}`, {
    errors: [{ field: 'eventType', message: `cannot be triggered; one of: ${supported.join(', ')}` }],
    triggerable: supported,
  });
}
