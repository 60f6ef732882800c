/**
 * The errors of cards, by the live API's status and code for each case (facts-cards §7). Where the
 * live document names no code, the generic one of the status is used and `details.reason` says which
 * case it is. `FUNDING_SOURCE_INELIGIBLE` is the live API's own code (its operations and guides use
 * it) although its Error400 enum lacks it.
 */
import { errors, type FieldError } from '../../http/errors.ts';

export const cardErrors = {
  /** Every card operation on a platform without a card issuer (Corridor's PRODUCTION platforms). */
  notImplemented: () =>
    errors.coded(
      501,
      'NOT_IMPLEMENTED',
      'Cards are not available on this platform: a self-hosted Corridor has no card issuer, so cards work on SANDBOX platforms only',
    ),
  notFound: (id: string) => errors.coded(404, 'REFERENCE_NOT_FOUND', `Card ${id} not found`),
  transactionNotFound: (id: string) => errors.coded(404, 'TRANSACTION_NOT_FOUND', `Card transaction ${id} not found`),
  kycNotApproved: (customerId: string, status: string) =>
    errors.coded(400, 'CARDHOLDER_KYC_NOT_APPROVED', `Cardholder ${customerId} must be KYC-approved to hold a card (it is ${status})`, {
      errors: [{ field: 'cardholderId', message: `the customer's verification status is ${status}, not APPROVED` }],
    }),
  ineligible: (problems: FieldError[]) =>
    errors.coded(
      400,
      'FUNDING_SOURCE_INELIGIBLE',
      `${problems[0]?.field ?? 'fundingSources'}: ${problems[0]?.message ?? 'is not an eligible funding source'}`,
      { errors: problems },
    ),
  platformCardIdTaken: (platformCardId: string) =>
    errors.conflict(`platformCardId ${platformCardId} is already used by another card of this platform`, {
      errors: [{ field: 'platformCardId', message: 'is already used by another card' }],
    }),
  noThreeDSecurePassword: () =>
    errors.invalidField(
      'threeDSecurePassword',
      'is not accepted: Corridor’s sandbox card program has no static-password 3-D Secure factor (only EU programs do)',
    ),
  nothingToUpdate: () =>
    errors.invalidInput('Give at least one of state, fundingSources, maxSpendPerTransaction', [
      { field: 'state', message: 'at least one of state, fundingSources, maxSpendPerTransaction is required' },
    ]),
  closeWithOthers: (field: 'fundingSources' | 'maxSpendPerTransaction') =>
    errors.invalidField(field, 'cannot be changed together with state CLOSED'),
  stateRefused: (code: 'INVALID_STATE_TRANSITION' | 'CARD_ALREADY_CLOSED', from: string, to: string) =>
    errors.coded(
      409,
      code,
      code === 'CARD_ALREADY_CLOSED'
        ? 'The card is already CLOSED'
        : `A ${from} card cannot become ${to}: the transitions are ACTIVE ⇄ FROZEN and ACTIVE | FROZEN → CLOSED`,
      { state: from, requestedState: to },
    ),
  notMutable: () => errors.coded(409, 'CARD_NOT_MUTABLE', 'The card is CLOSED: it can no longer be changed', { state: 'CLOSED' }),
  nothingToReveal: (state: string) =>
    errors.conflict(`A ${state} card has no details to reveal: only ACTIVE and FROZEN cards do`, { reason: 'CARD_NOT_REVEALABLE', state }),
  // ── sandbox simulations ──
  currencyMismatch: (cardCurrency: string) => errors.invalidField('currency.code', `must be the card's currency, ${cardCurrency}`),
  transactionState: (id: string, status: string, allowed: string) =>
    errors.invalidField('cardTransactionId', `${id} is ${status}; this simulation needs one that is ${allowed}`),
  creditTransaction: (id: string) =>
    errors.invalidField('cardTransactionId', `${id} is a credit: only a debit can be returned or reversed`),
  returnTooLarge: (refundable: number) =>
    errors.invalidField('amount', `is more than the net settled amount still refundable (${refundable})`),
  adviceBelowSettled: (settled: number) =>
    errors.invalidField('amount', `is below what has already settled (${settled}): an advice cannot shrink an authorization below it`),
};
