/** Beneficial owners: POST/GET /beneficial-owners, GET/PATCH /beneficial-owners/{beneficialOwnerId}. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { decodeCursor, toPage } from '../../http/pagination.ts';
import { errorResponses } from '../../http/schemas.ts';
import { created, ok, write } from '../../http/write.ts';
import { listBeneficialOwners } from './beneficial-owners.repo.ts';
import {
  BeneficialOwnerCreateSchema,
  BeneficialOwnerIdParams,
  BeneficialOwnerListQuery,
  BeneficialOwnerListSchema,
  BeneficialOwnerSchema,
  BeneficialOwnerUpdateSchema,
} from './beneficial-owners.schemas.ts';
import { createBeneficialOwner, requireBeneficialOwner, updateBeneficialOwner } from './beneficial-owners.service.ts';
import { beneficialOwnerToWire } from './beneficial-owners.wire.ts';

const TAG = 'KYC/KYB Verifications';

export function beneficialOwnerRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/beneficial-owners',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'createBeneficialOwner',
          tags: [TAG],
          summary: 'Add a beneficial owner, director or officer to a BUSINESS customer (runs KYC on the person)',
          body: BeneficialOwnerCreateSchema,
          response: { 201: BeneficialOwnerSchema, ...errorResponses(400, 401, 403, 404, 410) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => created(await createBeneficialOwner(u, req.body))),
    );

    app.get(
      '/beneficial-owners',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listBeneficialOwners',
          tags: [TAG],
          summary: "List a business customer's beneficial owners",
          querystring: BeneficialOwnerListQuery,
          response: { 200: BeneficialOwnerListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        const limit = req.query.limit ?? 20;
        const { rows, totalCount } = await listBeneficialOwners(
          ctx.db,
          platform.id,
          req.query.customerId,
          limit,
          decodeCursor(req.query.cursor),
        );
        return toPage(rows, limit, totalCount, beneficialOwnerToWire);
      },
    );

    app.get(
      '/beneficial-owners/:beneficialOwnerId',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getBeneficialOwner',
          tags: [TAG],
          summary: 'Get a beneficial owner',
          params: BeneficialOwnerIdParams,
          response: { 200: BeneficialOwnerSchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => beneficialOwnerToWire(await requireBeneficialOwner(ctx.db, platformOf(req).platform.id, req.params.beneficialOwnerId)),
    );

    app.patch(
      '/beneficial-owners/:beneficialOwnerId',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'updateBeneficialOwner',
          tags: [TAG],
          summary: 'Update a beneficial owner (only the fields sent change)',
          params: BeneficialOwnerIdParams,
          body: BeneficialOwnerUpdateSchema,
          response: { 200: BeneficialOwnerSchema, ...errorResponses(400, 401, 403, 404, 410) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => ok(await updateBeneficialOwner(u, req.params.beneficialOwnerId, req.body))),
    );
  };
}
