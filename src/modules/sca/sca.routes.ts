/**
 * Strong Customer Authentication (issue #23): the area's routes — factors, login and security
 * events here; 2FA resets and beneficiary trust in sca.more-routes.ts; the hosted liveness page in
 * sca.hosted.ts. (Quote authorisation lives in the payments module, on sca-challenges.ts.)
 * Rules: the services' headers and docs/sca.md.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { errorResponses } from '../../http/schemas.ts';
import { noContent, ok, write, writeThen } from '../../http/write.ts';
import { confirmEnrollment, deletePasskey, listFactors, startEnrollment } from './sca.factors.service.ts';
import { completeLogin, recordEvent, startLogin } from './sca.login.service.ts';
import { scaMoreRoutes } from './sca.more-routes.ts';
import {
  CredentialIdParams,
  CustomerIdQuery,
  RecordSecurityEventRequestSchema,
  RecordSecurityEventResponseSchema,
  ScaFactorConfirmRequestSchema,
  ScaFactorConfirmResponseSchema,
  ScaFactorEnrollRequestSchema,
  ScaFactorEnrollStartSchema,
  ScaFactorListSchema,
  ScaLoginCompleteRequestSchema,
  ScaLoginCompleteSchema,
  ScaLoginStartRequestSchema,
  ScaLoginStartSchema,
  SCA_ONLY,
  SCA_TAG,
} from './sca.schemas.ts';

export function scaRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/sca/factors',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listScaFactors',
          tags: [SCA_TAG],
          summary: 'List enrolled SCA factors',
          description: `SMS_OTP for every SCA customer, plus its TOTP and passkey once enrolled. ${SCA_ONLY}`,
          querystring: CustomerIdQuery,
          response: { 200: ScaFactorListSchema, ...errorResponses(400, 401, 403, 404, 409, 410) },
        },
      },
      async (req) => listFactors(ctx, platformOf(req).platform, req.query.customerId),
    );

    app.post(
      '/sca/factors',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'startScaFactorEnrollment',
          tags: [SCA_TAG],
          summary: 'Start SCA factor enrollment',
          description:
            'TOTP: a fresh shared secret and its otpauth:// URI (SHA1, 6 digits, 30 s); PASSKEY: WebAuthn creation options. ' +
            `Complete within 5 minutes with POST /sca/factors/confirm. One TOTP and one passkey per customer (409). ${SCA_ONLY}`,
          querystring: CustomerIdQuery,
          body: ScaFactorEnrollRequestSchema,
          response: { 200: ScaFactorEnrollStartSchema, ...errorResponses(400, 401, 403, 404, 409, 410) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => ok(await startEnrollment(u, req.query.customerId, req.body.type))),
    );

    app.post(
      '/sca/factors/confirm',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'confirmScaFactorEnrollment',
          tags: [SCA_TAG],
          summary: 'Confirm SCA factor enrollment',
          description:
            'TOTP: the secret from the start and a current code (recovery codes are answered once); PASSKEY: the WebAuthn credential ' +
            `and the origin it was produced against. A wrong code or credential is 400. In sandbox, the TOTP code 123456 is accepted too. ${SCA_ONLY}`,
          querystring: CustomerIdQuery,
          body: ScaFactorConfirmRequestSchema,
          response: { 200: ScaFactorConfirmResponseSchema, ...errorResponses(400, 401, 403, 404, 409, 410) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => ok(await confirmEnrollment(u, req.query.customerId, req.body))),
    );

    app.delete(
      '/sca/factors/:credentialId',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'deleteScaFactor',
          tags: [SCA_TAG],
          summary: 'Delete an enrolled SCA factor',
          description: `Deletes the customer's passkey (only passkeys have a credentialId); 404 for any other id. ${SCA_ONLY}`,
          params: CredentialIdParams,
          querystring: CustomerIdQuery,
          response: { 204: { type: 'null', description: 'Factor deleted' }, ...errorResponses(400, 401, 403, 404, 409, 410) },
        },
      },
      async (req, reply) =>
        write(ctx, req, reply, async (u) => {
          await deletePasskey(u, req.query.customerId, req.params.credentialId);
          return noContent;
        }),
    );

    app.post(
      '/sca/login/start',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'startScaLogin',
          tags: [SCA_TAG],
          summary: 'Start an SCA login',
          description:
            'SMS_OTP: a 5-minute challenge (challengeId, expiresAt; the sandbox code is 123456); TOTP: nothing more; PASSKEY: WebAuthn ' +
            `request options. The factor must be enrolled (SMS_OTP: the customer needs a phone number), else 400. ${SCA_ONLY}`,
          querystring: CustomerIdQuery,
          body: ScaLoginStartRequestSchema,
          response: { 200: ScaLoginStartSchema, ...errorResponses(400, 401, 403, 404, 409, 410) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => ok(await startLogin(u, req.query.customerId, req.body.factor))),
    );

    app.post(
      '/sca/login/complete',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'completeScaLogin',
          tags: [SCA_TAG],
          summary: 'Complete an SCA login',
          description:
            'A right proof opens the 180-day SCA session. A wrong one is 400 and counts against the login (the 5th voids it: 429) and ' +
            'the failed-login counter (5 → locked 15 min, 6 → 30 min, 7 → 1 h, 8 → 24 h, 9 → suspended); 423 ACCOUNT_LOCKED while locked. ' +
            `In sandbox, the SMS/TOTP code is 123456. ${SCA_ONLY}`,
          querystring: CustomerIdQuery,
          body: ScaLoginCompleteRequestSchema,
          response: { 200: ScaLoginCompleteSchema, ...errorResponses(400, 401, 403, 404, 409, 410, 423, 429) },
        },
      },
      // A wrong proof is counted in the unit, which commits; the refusal is answered after it.
      async (req, reply) =>
        writeThen(
          ctx,
          req,
          reply,
          (u) => completeLogin(u, req.query.customerId, req.body),
          async (outcome) => {
            if (outcome.kind === 'rejected') throw outcome.error;
            return ok({ status: 'SUCCESS', sessionExpiresAt: outcome.sessionExpiresAt });
          },
        ),
    );

    app.post(
      '/sca/record-event',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'recordSecurityEvent',
          tags: [SCA_TAG],
          summary: 'Record a security event',
          description:
            'FAILED_LOGIN_ATTEMPT adds one to the failed-login counter (200 with the resulting lock, including the event that starts ' +
            'it; 423 while already locked). RESET_PASSWORD_COMPLETED resets the counter, lifts a lock or suspension and revokes the ' +
            `SCA session. ${SCA_ONLY}`,
          querystring: CustomerIdQuery,
          body: RecordSecurityEventRequestSchema,
          response: { 200: RecordSecurityEventResponseSchema, ...errorResponses(400, 401, 403, 404, 409, 410, 423) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => ok(await recordEvent(u, req.query.customerId, req.body.eventType))),
    );

    await app.register(scaMoreRoutes(ctx));
  };
}
