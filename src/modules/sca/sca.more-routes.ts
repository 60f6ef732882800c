/**
 * SCA routes, continued: 2FA resets (start, status, complete), beneficiary trust and untrust
 * (start, confirm), and the hosted liveness page a reset's verificationLink opens.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { BASE_PATH } from '../../config.ts';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { errorResponses, Obj } from '../../http/schemas.ts';
import { created, noContent, ok, write, writeThen } from '../../http/write.ts';
import { platformNowMs } from '../../lib/time.ts';
import { HOSTED_LIVENESS_PATH, hostedLivenessRoutes } from './sca.hosted.ts';
import { completeReset, getReset, startReset } from './sca.resets.service.ts';
import {
  BeneficiaryTrustConfirmRequestSchema,
  BeneficiaryTrustConfirmSchema,
  BeneficiaryTrustStartSchema,
  CustomerIdQuery,
  ExternalAccountIdParams,
  ResetIdParams,
  SCA_ONLY,
  SCA_TAG,
  TwoFactorResetCompleteRequestSchema,
  TwoFactorResetStartRequestSchema,
  TwoFactorResetStartSchema,
  TwoFactorResetStatusSchema,
} from './sca.schemas.ts';
import { confirmTrustChange, startTrustChange, type TrustDirection } from './sca.trust.service.ts';

/** `protocol://host` when `host` is a plain host[:port], else undefined (as the hosted KYC links do). */
function originOf(protocol: string, host: string | undefined): string | undefined {
  if (!host) return undefined;
  try {
    const url = new URL(`${protocol}://${host}`);
    const plain = url.username === '' && url.password === '' && url.pathname === '/' && url.search === '' && url.hash === '';
    return plain ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/** The liveness page's URL the token is appended to: this server as the API call reached it. */
function pageBaseOf(req: FastifyRequest): string {
  const path = `${BASE_PATH}${HOSTED_LIVENESS_PATH}`;
  const origin = originOf(req.protocol, req.headers.host);
  if (origin) return `${origin}${path}`;
  const { localAddress = '127.0.0.1', localPort } = req.socket;
  const host = localAddress.includes(':') ? `[${localAddress}]` : localAddress;
  return `${req.protocol}://${host}:${localPort}${path}`;
}

const TRUST: { direction: TrustDirection; path: string; start: string; confirm: string; verb: string }[] = [
  { direction: 'TRUST', path: 'trust', start: 'startBeneficiaryTrust', confirm: 'confirmBeneficiaryTrust', verb: 'trusting' },
  { direction: 'UNTRUST', path: 'untrust', start: 'startBeneficiaryUntrust', confirm: 'confirmBeneficiaryUntrust', verb: 'untrusting' },
];

export function scaMoreRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/sca/factors/reset',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'startTwoFactorReset',
          tags: [SCA_TAG],
          summary: 'Start a 2FA reset',
          description:
            'Opens a 15-minute reset window behind a liveness check on the hosted page `verificationLink` (sandbox: pass or fail ' +
            'buttons; the result 5 s after submitting). The factor must be SMS_OTP or an enrolled one (else 400). At most 5 starts ' +
            `per customer in 24 hours (429 with Retry-After). ${SCA_ONLY}`,
          querystring: CustomerIdQuery,
          body: TwoFactorResetStartRequestSchema,
          response: { 201: TwoFactorResetStartSchema, ...errorResponses(400, 401, 403, 404, 409, 410, 429) },
        },
      },
      async (req, reply) => {
        const pageBase = pageBaseOf(req);
        return write(ctx, req, reply, async (u) => created(await startReset(u, req.query.customerId, req.body.factor, pageBase)));
      },
    );

    app.get(
      '/sca/factors/reset/:resetId',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getTwoFactorResetStatus',
          tags: [SCA_TAG],
          summary: 'Get 2FA reset status',
          description: `INITIATED → PENDING_REVIEW → LIVENESS_PASSED → COMPLETED; REJECTED and EXPIRED end it too. ${SCA_ONLY}`,
          params: ResetIdParams,
          querystring: CustomerIdQuery,
          response: { 200: TwoFactorResetStatusSchema, ...errorResponses(400, 401, 403, 404, 409, 410) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        return getReset(ctx, platform, platformNowMs(ctx.deps.clock, platform), req.query.customerId, req.params.resetId);
      },
    );

    app.post(
      '/sca/factors/reset/:resetId/complete',
      {
        config: { auth: 'platform', permission: 'MANAGE', optionalBody: true },
        schema: {
          operationId: 'completeTwoFactorReset',
          tags: [SCA_TAG],
          summary: 'Complete a 2FA reset',
          description:
            'Once LIVENESS_PASSED (else 400). SMS_OTP: `mobile` is required and becomes the SCA SMS number. TOTP / PASSKEY: the factor ' +
            `is cleared; enrollmentStatus stays PENDING until a replacement is enrolled. ${SCA_ONLY}`,
          params: ResetIdParams,
          querystring: CustomerIdQuery,
          body: TwoFactorResetCompleteRequestSchema,
          response: { 204: { type: 'null', description: 'Reset completed' }, ...errorResponses(400, 401, 403, 404, 409, 410) },
        },
      },
      async (req, reply) =>
        write(ctx, req, reply, async (u) => {
          await completeReset(u, req.query.customerId, req.params.resetId, req.body ?? {});
          return noContent;
        }),
    );

    for (const { direction, path, start, confirm, verb } of TRUST) {
      app.post(
        `/customers/external-accounts/:externalAccountId/${path}`,
        {
          config: { auth: 'platform', permission: 'MANAGE', optionalBody: true },
          schema: {
            operationId: start,
            tags: [SCA_TAG],
            summary: `Start ${verb} a beneficiary`,
            description:
              `Issues an SMS_OTP challenge (5 minutes; the sandbox code is 123456) whose id the confirm echoes. Customer external ` +
              `accounts only. 409 when the account is already ${direction === 'TRUST' ? 'trusted' : 'untrusted'}. ` +
              'The owning customer must be an SCA customer (an address in the EEA), else 409.',
            params: ExternalAccountIdParams,
            body: Obj({}),
            response: { 200: BeneficiaryTrustStartSchema, ...errorResponses(400, 401, 403, 404, 409, 410) },
          },
        },
        async (req, reply) => write(ctx, req, reply, async (u) => ok(await startTrustChange(u, req.params.externalAccountId, direction))),
      );

      app.post(
        `/customers/external-accounts/:externalAccountId/${path}/confirm`,
        {
          config: { auth: 'platform', permission: 'MANAGE' },
          schema: {
            operationId: confirm,
            tags: [SCA_TAG],
            summary: `Confirm ${verb} a beneficiary`,
            description:
              'The code of the pending challenge (or a code of the enrolled TOTP). A wrong code is 400 and counts (the 5th voids the ' +
              'challenge: 429); without a pending start 409. In sandbox, the SMS/TOTP code is 123456.',
            params: ExternalAccountIdParams,
            body: BeneficiaryTrustConfirmRequestSchema,
            response: { 200: BeneficiaryTrustConfirmSchema, ...errorResponses(400, 401, 403, 404, 409, 410, 429) },
          },
        },
        async (req, reply) =>
          writeThen(
            ctx,
            req,
            reply,
            (u) => confirmTrustChange(u, req.params.externalAccountId, direction, req.body),
            async (outcome) => {
              if (outcome.kind === 'rejected') throw outcome.error;
              return ok({ trusted: outcome.trusted });
            },
          ),
      );
    }

    await app.register(hostedLivenessRoutes(ctx));
  };
}
