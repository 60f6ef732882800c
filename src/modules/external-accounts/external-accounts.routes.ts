/**
 * External accounts: POST/GET /customers/external-accounts, GET/DELETE
 * /customers/external-accounts/{externalAccountId}, and the /platform/external-accounts
 * equivalents (platform-owned accounts only).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { decodeCursor, toPage } from '../../http/pagination.ts';
import { errorResponses } from '../../http/schemas.ts';
import { created, noContent, write } from '../../http/write.ts';
import { listExternalAccounts, type ExternalAccountFilter } from './external-accounts.repo.ts';
import {
  CustomerExternalAccountListQuery,
  ExternalAccountCreateSchema,
  ExternalAccountIdParams,
  ExternalAccountListSchema,
  ExternalAccountSchema,
  PlatformExternalAccountCreateSchema,
  PlatformExternalAccountListQuery,
} from './external-accounts.schemas.ts';
import { createExternalAccount, deleteExternalAccount, externalAccountToWire, getExternalAccount } from './external-accounts.service.ts';

const TAG = 'External Accounts';
const deleted = { 204: { type: 'null', description: 'Deleted' } } as const;

export function externalAccountRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    const list = async (platformId: string, q: { limit?: number; cursor?: string }, f: ExternalAccountFilter) => {
      const limit = q.limit ?? 20;
      const { rows, totalCount } = await listExternalAccounts(ctx.db, platformId, f, limit, decodeCursor(q.cursor));
      return toPage(rows, limit, totalCount, externalAccountToWire);
    };

    app.post(
      '/customers/external-accounts',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'createCustomerExternalAccount',
          tags: [TAG],
          summary: 'Register an external bank account or wallet for a customer (or, without customerId, the platform)',
          body: ExternalAccountCreateSchema,
          response: { 201: ExternalAccountSchema, ...errorResponses(400, 401, 403, 404, 409, 410) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => created(await createExternalAccount(u, req.body))),
    );

    app.get(
      '/customers/external-accounts',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listCustomerExternalAccounts',
          tags: [TAG],
          summary: 'List external accounts (all of the platform, or one customer with customerId)',
          querystring: CustomerExternalAccountListQuery,
          response: { 200: ExternalAccountListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        return list(platform.id, req.query, { scope: 'customers', customerId: req.query.customerId, currency: req.query.currency });
      },
    );

    app.get(
      '/customers/external-accounts/:externalAccountId',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getCustomerExternalAccountById',
          tags: [TAG],
          summary: 'Get an external account',
          params: ExternalAccountIdParams,
          response: { 200: ExternalAccountSchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        return externalAccountToWire(await getExternalAccount(ctx, platform.id, req.params.externalAccountId, 'any'));
      },
    );

    app.delete(
      '/customers/external-accounts/:externalAccountId',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'deleteCustomerExternalAccountById',
          tags: [TAG],
          summary: 'Delete an external account',
          params: ExternalAccountIdParams,
          response: { ...deleted, ...errorResponses(401, 403, 404) },
        },
      },
      async (req, reply) =>
        write(ctx, req, reply, async (u) => {
          await deleteExternalAccount(u, req.params.externalAccountId, 'any');
          return noContent;
        }),
    );

    app.post(
      '/platform/external-accounts',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'createPlatformExternalAccount',
          tags: [TAG],
          summary: 'Register an external bank account or wallet for the platform itself',
          body: PlatformExternalAccountCreateSchema,
          response: { 201: ExternalAccountSchema, ...errorResponses(400, 401, 403, 409) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => created(await createExternalAccount(u, req.body))),
    );

    app.get(
      '/platform/external-accounts',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listPlatformExternalAccounts',
          tags: [TAG],
          summary: "List the platform's own external accounts",
          querystring: PlatformExternalAccountListQuery,
          response: { 200: ExternalAccountListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        return list(platform.id, req.query, { scope: 'platform', currency: req.query.currency });
      },
    );

    app.get(
      '/platform/external-accounts/:externalAccountId',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getPlatformExternalAccountById',
          tags: [TAG],
          summary: 'Get a platform external account',
          params: ExternalAccountIdParams,
          response: { 200: ExternalAccountSchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        return externalAccountToWire(await getExternalAccount(ctx, platform.id, req.params.externalAccountId, 'platform'));
      },
    );

    app.delete(
      '/platform/external-accounts/:externalAccountId',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'deletePlatformExternalAccountById',
          tags: [TAG],
          summary: 'Delete a platform external account',
          params: ExternalAccountIdParams,
          response: { ...deleted, ...errorResponses(401, 403, 404) },
        },
      },
      async (req, reply) =>
        write(ctx, req, reply, async (u) => {
          await deleteExternalAccount(u, req.params.externalAccountId, 'platform');
          return noContent;
        }),
    );
  };
}
