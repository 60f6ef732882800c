/** KYC/KYB verifications: POST/GET /verifications, GET /verifications/{verificationId}. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { decodeCursor, toPage } from '../../http/pagination.ts';
import { errorResponses } from '../../http/schemas.ts';
import { ok, write } from '../../http/write.ts';
import { listVerifications } from './verifications.repo.ts';
import {
  VerificationIdParams,
  VerificationListQuery,
  VerificationListSchema,
  VerificationRequestSchema,
  VerificationSchema,
} from './verifications.schemas.ts';
import { createVerification, requireVerification, verificationToWire } from './verifications.service.ts';

const TAG = 'KYC/KYB Verifications';

export function verificationRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/verifications',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'createVerification',
          tags: [TAG],
          summary: 'Submit a customer for KYC (individual) or KYB (business); RESOLVE_ERRORS lists what is missing',
          body: VerificationRequestSchema,
          response: { 200: VerificationSchema, ...errorResponses(400, 401, 403, 404, 410) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => ok(await createVerification(u, req.body.customerId))),
    );

    app.get(
      '/verifications',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listVerifications',
          tags: [TAG],
          summary: 'List verifications, optionally of one customer or in one status',
          querystring: VerificationListQuery,
          response: { 200: VerificationListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        const q = req.query;
        const limit = q.limit ?? 20;
        const { rows, totalCount } = await listVerifications(
          ctx.db,
          platform.id,
          { customerId: q.customerId, verificationStatus: q.verificationStatus },
          limit,
          decodeCursor(q.cursor),
        );
        return toPage(rows, limit, totalCount, verificationToWire);
      },
    );

    app.get(
      '/verifications/:verificationId',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getVerification',
          tags: [TAG],
          summary: 'Get a verification',
          params: VerificationIdParams,
          response: { 200: VerificationSchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => verificationToWire(await requireVerification(ctx.db, platformOf(req).platform.id, req.params.verificationId)),
    );
  };
}
