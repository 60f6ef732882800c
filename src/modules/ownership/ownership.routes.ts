/**
 * External account ownership verification (issue #22): POST /customers/external-accounts/{id}/challenge
 * and …/verify, and the /platform/external-accounts equivalents (platform-owned accounts only; the
 * customer routes act on customers' accounts only).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import type { ApiError } from '../../http/errors.ts';
import { errorResponses } from '../../http/schemas.ts';
import { created, ok, write, type Outcome } from '../../http/write.ts';
import { ExternalAccountSchema } from '../external-accounts/external-accounts.schemas.ts';
import {
  OwnershipAccountParams,
  OwnershipChallengeRequestSchema,
  OwnershipChallengeSchema,
  OwnershipVerifyRequestSchema,
} from './ownership.schemas.ts';
import { createOwnershipChallenge, type OwnershipScope, verifyOwnership } from './ownership.service.ts';

const TAG = 'External Accounts';

/** An error answered as the unit's outcome, so that what the unit wrote before it commits. */
const failed = (err: ApiError): Outcome => ({ status: err.status, body: err.toBody() });

const CHALLENGE_DESCRIPTION =
  'Starts ownership verification of a FIRST_PARTY self-custody wallet in PENDING_OWNERSHIP_VERIFICATION or UNVERIFIED ' +
  '(an UNVERIFIED account returns to PENDING_OWNERSHIP_VERIFICATION). A new challenge abandons the outstanding one: use it to ' +
  'retry, to replace an expired challenge or to switch method. WALLET_SIGNATURE answers a message to sign (15 minutes); LIVENESS a ' +
  'hosted check that reports through EXTERNAL_ACCOUNT.STATUS_UPDATED (sandbox: after 30 seconds, passing unless the address ends ' +
  'in 222 (fails) or 333 (never completes)).';
const VERIFY_DESCRIPTION =
  "Completes a WALLET_SIGNATURE challenge with the wallet's signature over messageToSign. A valid signature before expiresAt " +
  'makes the account ACTIVE; an invalid or late one answers 400 and leaves it UNVERIFIED (start a new challenge). A signature ' +
  "not in the wallet's encoding is a 400 that changes nothing.";

/** The four operations: one row each, the path spelled out. */
const CHALLENGES = [
  {
    path: '/customers/external-accounts/:externalAccountId/challenge',
    operationId: 'createExternalAccountOwnershipChallenge',
    scope: 'customer',
  },
  {
    path: '/platform/external-accounts/:externalAccountId/challenge',
    operationId: 'createPlatformExternalAccountOwnershipChallenge',
    scope: 'platform',
  },
] as const satisfies readonly { path: string; operationId: string; scope: OwnershipScope }[];

const VERIFICATIONS = [
  { path: '/customers/external-accounts/:externalAccountId/verify', operationId: 'verifyExternalAccountOwnership', scope: 'customer' },
  {
    path: '/platform/external-accounts/:externalAccountId/verify',
    operationId: 'verifyPlatformExternalAccountOwnership',
    scope: 'platform',
  },
] as const satisfies readonly { path: string; operationId: string; scope: OwnershipScope }[];

export function ownershipRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const { path, operationId, scope } of CHALLENGES) {
      app.post(
        path,
        {
          config: { auth: 'platform', permission: 'MANAGE' },
          schema: {
            operationId,
            tags: [TAG],
            summary: 'Start (or restart) an ownership verification challenge',
            description: CHALLENGE_DESCRIPTION,
            params: OwnershipAccountParams,
            body: OwnershipChallengeRequestSchema,
            response: { 201: OwnershipChallengeSchema, ...errorResponses(400, 401, 403, 404, 409, 501) },
          },
        },
        async (req, reply) =>
          write(ctx, req, reply, async (u) => created(await createOwnershipChallenge(u, scope, req.params.externalAccountId, req.body))),
      );
    }

    for (const { path, operationId, scope } of VERIFICATIONS) {
      app.post(
        path,
        {
          config: { auth: 'platform', permission: 'MANAGE' },
          schema: {
            operationId,
            tags: [TAG],
            summary: 'Verify ownership with a wallet signature',
            description: VERIFY_DESCRIPTION,
            params: OwnershipAccountParams,
            body: OwnershipVerifyRequestSchema,
            response: { 200: ExternalAccountSchema, ...errorResponses(400, 401, 403, 404, 409) },
          },
        },
        async (req, reply) =>
          write(ctx, req, reply, async (u) => {
            const out = await verifyOwnership(u, scope, req.params.externalAccountId, req.body);
            return out.kind === 'verified' ? ok(out.account) : failed(out.error);
          }),
      );
    }
  };
}
