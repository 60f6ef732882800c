/**
 * The ten sandbox card simulations, `POST /sandbox/cards/{id}/simulate/<message>` (snake_case, as
 * the live paths are). Each answers 202 with the issuer token once its effect has committed; a
 * decline is a 202 too, and the headers say which it was (`Corridor-Card-Decision: APPROVED |
 * DECLINED`, `Corridor-Decline-Reason`), since the live body has no field for it. Sandbox platforms
 * only (403 otherwise, checked by the cards plugin's hook); money movement, so TRANSACT.
 */
import type { TSchema } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errorResponses } from '../../http/schemas.ts';
import { accepted, type Outcome, write } from '../../http/write.ts';
import type { Unit } from '../../unit.ts';
import {
  type SimulationOutcome,
  simulateAdvice,
  simulateAuthorization,
  simulateBalanceInquiry,
  simulateClearing,
  simulateReturn,
  simulateReturnReversal,
} from './card-simulations.service.ts';
import {
  CardIdParams,
  type SandboxCardAuthorization,
  SandboxCardAdviceSchema,
  SandboxCardAuthorizationSchema,
  SandboxCardBalanceInquirySchema,
  SandboxCardClearingSchema,
  SandboxCardReturnSchema,
  SandboxCardSimulationResponseSchema,
  SandboxCardTransactionRefSchema,
} from './cards.schemas.ts';
import type { CardTransactionKind } from './cards.tables.ts';

const TAG = 'Sandbox';

export const DECISION_HEADER = 'corridor-card-decision';
export const DECLINE_REASON_HEADER = 'corridor-decline-reason';

interface Simulation {
  path: string;
  operationId: string;
  summary: string;
  body: TSchema;
  run: (u: Unit, cardId: string, body: unknown) => Promise<SimulationOutcome>;
}

const authorizationLike = (kind: CardTransactionKind) => (u: Unit, cardId: string, body: unknown) =>
  simulateAuthorization(u, cardId, kind, body as SandboxCardAuthorization);
const ref =
  <T>(fn: (u: Unit, cardId: string, body: T) => Promise<SimulationOutcome>) =>
  (u: Unit, cardId: string, body: unknown) =>
    fn(u, cardId, body as T);

const SUFFIXES =
  'merchant.descriptor ending in 002 declines (INSUFFICIENT_FUNDS), 003 declines (CARD_PAUSED), 005 delays the pull 30 s, 006 ends in EXCEPTION';

const SIMULATIONS: Simulation[] = [
  {
    path: 'authorization',
    operationId: 'sandboxSimulateCardAuthorization',
    summary: `Simulate a card authorization: approved, it holds the amount on the first funding source that covers it (${SUFFIXES})`,
    body: SandboxCardAuthorizationSchema,
    run: authorizationLike('AUTHORIZATION'),
  },
  {
    path: 'clearing',
    operationId: 'sandboxSimulateCardClearing',
    summary: 'Simulate a clearing of an open card transaction: below the hold PARTIALLY_SETTLED, above it a post-hoc pull, 0 expires it',
    body: SandboxCardClearingSchema,
    run: ref(simulateClearing),
  },
  {
    path: 'return',
    operationId: 'sandboxSimulateCardReturn',
    summary: 'Simulate a merchant return on a SETTLED card transaction (all of it: REFUNDED)',
    body: SandboxCardReturnSchema,
    run: ref(simulateReturn),
  },
  {
    path: 'balance_inquiry',
    operationId: 'sandboxSimulateCardBalanceInquiry',
    summary: 'Simulate a balance inquiry (a 0-amount authorization: no money, no transaction)',
    body: SandboxCardBalanceInquirySchema,
    run: (u, cardId) => simulateBalanceInquiry(u, cardId),
  },
  {
    path: 'credit_authorization',
    operationId: 'sandboxSimulateCardCreditAuthorization',
    summary: 'Simulate a credit authorization: a pending credit on the funding source, available once cleared',
    body: SandboxCardAuthorizationSchema,
    run: authorizationLike('CREDIT_AUTHORIZATION'),
  },
  {
    path: 'financial_authorization',
    operationId: 'sandboxSimulateCardFinancialAuthorization',
    summary: 'Simulate a single-message (financial) authorization: pulled and SETTLED at once',
    body: SandboxCardAuthorizationSchema,
    run: authorizationLike('FINANCIAL_AUTHORIZATION'),
  },
  {
    path: 'financial_credit_authorization',
    operationId: 'sandboxSimulateCardFinancialCreditAuthorization',
    summary: 'Simulate a single-message credit: credited and SETTLED at once',
    body: SandboxCardAuthorizationSchema,
    run: authorizationLike('FINANCIAL_CREDIT_AUTHORIZATION'),
  },
  {
    path: 'authorization_advice',
    operationId: 'sandboxSimulateCardAuthorizationAdvice',
    summary: 'Simulate an authorization advice: re-sizes an open card transaction to a new total authorized amount',
    body: SandboxCardAdviceSchema,
    run: ref(simulateAdvice),
  },
  {
    path: 'credit_authorization_advice',
    operationId: 'sandboxSimulateCardCreditAuthorizationAdvice',
    summary: 'Simulate a network-initiated credit authorization advice (as a credit authorization)',
    body: SandboxCardAuthorizationSchema,
    run: authorizationLike('CREDIT_AUTHORIZATION_ADVICE'),
  },
  {
    path: 'return_reversal',
    operationId: 'sandboxSimulateCardReturnReversal',
    summary: 'Simulate a return reversal on a REFUNDED card transaction: its latest return is taken back',
    body: SandboxCardTransactionRefSchema,
    run: ref(simulateReturnReversal),
  },
];

function answer(reply: FastifyReply, o: SimulationOutcome): Outcome {
  reply.header(DECISION_HEADER, o.decision);
  if (o.declineReason !== undefined) reply.header(DECLINE_REASON_HEADER, o.declineReason);
  else reply.removeHeader(DECLINE_REASON_HEADER);
  return accepted({ issuerTransactionToken: o.token });
}

export function cardSimulationRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const s of SIMULATIONS) {
      app.post(
        `/sandbox/cards/:id/simulate/${s.path}`,
        {
          config: { auth: 'platform', permission: 'TRANSACT' },
          schema: {
            operationId: s.operationId,
            tags: [TAG],
            summary: s.summary,
            description:
              'Corridor applies the message before it answers (the live API delivers it asynchronously): the card transaction, ' +
              'its webhook and the money are there when the 202 arrives. The Corridor-Card-Decision header says APPROVED or ' +
              'DECLINED (with Corridor-Decline-Reason). Sandbox platforms only.',
            params: CardIdParams,
            body: s.body,
            response: { 202: SandboxCardSimulationResponseSchema, ...errorResponses(400, 401, 403, 404) },
          },
        },
        async (req, reply) => write(ctx, req, reply, async (u) => answer(reply, await s.run(u, req.params.id, req.body))),
      );
    }
  };
}
