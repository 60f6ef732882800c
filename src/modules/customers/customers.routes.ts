/**
 * Customers: POST/GET /customers, GET/PATCH/DELETE /customers/{customerId},
 * GET /customers/end-user-terms, and GET /customers/internal-accounts (the customers' holding
 * accounts and embedded wallets).
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { decodeCursor, pageRequest, toPage, toWirePage } from '../../http/pagination.ts';
import { errorResponses } from '../../http/schemas.ts';
import { walletSignatureOf } from '../../http/wallet-signature.ts';
import { accepted, created, ok, write } from '../../http/write.ts';
import { normalizeDateTime } from '../../lib/time.ts';
import { SignatureHeaders, SignedRequestChallengeSchema } from '../auth/auth.schemas.ts';
import { listCustomerAccounts } from '../internal-accounts/internal-accounts.repo.ts';
import { internalAccountToWire } from '../internal-accounts/internal-accounts.service.ts';
import { findCustomersByIds } from './customers.repo.ts';
import {
  CustomerCreateSchema,
  CustomerIdParams,
  CustomerInternalAccountsQuery,
  CustomerListQuery,
  CustomerListSchema,
  CustomerSchema,
  CustomerUpdateSchema,
  EndUserTermsSchema,
  InternalAccountListSchema,
} from './customers.schemas.ts';
import {
  createCustomer,
  customerHolderName,
  deleteCustomer,
  END_USER_TERMS,
  getCustomer,
  listCustomers,
  updateCustomer,
} from './customers.service.ts';

const TAG = 'Customers';

export function customerRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/customers',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'createCustomer',
          tags: [TAG],
          summary: 'Create a customer (individual or business) and its internal accounts',
          // Optional, as on the live API's other creates: a replay returns the first response.
          headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String()) }),
          body: CustomerCreateSchema,
          response: { 201: CustomerSchema, ...errorResponses(400, 401, 403, 409) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => created(await createCustomer(u, req.body))),
    );

    app.get(
      '/customers',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listCustomers',
          tags: [TAG],
          summary: 'List customers',
          querystring: CustomerListQuery,
          response: { 200: CustomerListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => {
        const q = req.query;
        const filter = {
          platformCustomerId: q.platformCustomerId,
          customerType: q.customerType,
          createdAfter: normalizeDateTime(q.createdAfter),
          createdBefore: normalizeDateTime(q.createdBefore),
          updatedAfter: normalizeDateTime(q.updatedAfter),
          updatedBefore: normalizeDateTime(q.updatedBefore),
          region: q.region,
          currency: q.currency,
          // Addresses are stored lowercase (they are case-insensitive).
          umaAddress: q.umaAddress?.toLowerCase(),
          includeDeleted: q.isIncludingDeleted ?? false,
        };
        return toWirePage(await listCustomers(ctx, platformOf(req).platform, filter, pageRequest(q)));
      },
    );

    app.get(
      '/customers/end-user-terms',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getEndUserTerms',
          tags: [TAG],
          summary: 'The current End User Terms version and where they are published',
          response: { 200: EndUserTermsSchema, ...errorResponses(401, 403) },
        },
      },
      async () => ({ ...END_USER_TERMS }),
    );

    app.get(
      '/customers/internal-accounts',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listCustomerInternalAccounts',
          tags: ['Internal Accounts'],
          summary: "List customers' internal accounts",
          querystring: CustomerInternalAccountsQuery,
          response: { 200: InternalAccountListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        const q = req.query;
        const limit = q.limit ?? 20;
        const { rows, totalCount } = await listCustomerAccounts(
          ctx.db,
          platform.id,
          { customerId: q.customerId, currency: q.currency, type: q.type },
          limit,
          decodeCursor(q.cursor),
        );
        const customerIds = [...new Set(rows.map((r) => r.customer_id).filter((c): c is string => c !== null))];
        const names = new Map(
          (await findCustomersByIds(ctx.db, platform.id, customerIds)).map((c) => [c.id, customerHolderName(c, platform.name)]),
        );
        return toPage(rows, limit, totalCount, (r) => internalAccountToWire(r, names.get(r.customer_id ?? '') ?? platform.name));
      },
    );

    app.get(
      '/customers/:customerId',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getCustomerById',
          tags: [TAG],
          summary: 'Get a customer (a deleted one reads with isDeleted: true)',
          params: CustomerIdParams,
          response: { 200: CustomerSchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => getCustomer(ctx, platformOf(req).platform, req.params.customerId),
    );

    app.patch(
      '/customers/:customerId',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'updateCustomerById',
          tags: [TAG],
          summary: 'Update a customer (partial; currencies replaces the list)',
          description:
            "Changing the email (phone number) that the EMAIL_OTP (SMS_OTP) credentials of the customer's embedded wallets sign in " +
            'with is a signed retry: 202 with a challenge, then the same request stamped by a session of one of those wallets ' +
            '(Service-Wallet-Signature, or Grid-Wallet-Signature, and Request-Id) updates the customer and those credentials together.',
          headers: SignatureHeaders,
          params: CustomerIdParams,
          body: CustomerUpdateSchema,
          response: { 200: CustomerSchema, 202: SignedRequestChallengeSchema, ...errorResponses(400, 401, 403, 404, 409, 410) },
        },
      },
      async (req, reply) => {
        const signature = walletSignatureOf(req);
        return write(ctx, req, reply, async (u) => {
          const out = await updateCustomer(u, req.params.customerId, req.body, signature);
          return out.kind === 'challenge' ? accepted(out.challenge) : ok(out.value);
        });
      },
    );

    app.delete(
      '/customers/:customerId',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'deleteCustomerById',
          tags: [TAG],
          summary: 'Delete a customer (soft delete; returns the deleted customer)',
          params: CustomerIdParams,
          response: { 200: CustomerSchema, ...errorResponses(401, 403, 404, 410) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => ok(await deleteCustomer(u, req.params.customerId))),
    );
  };
}
