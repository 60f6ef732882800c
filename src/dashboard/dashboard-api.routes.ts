/**
 * The reads the dashboard needs that the public API does not have. They are Corridor's own (not part
 * of the API being implemented) and documented as such, like the other operator routes — under the
 * `Admin` and `Dashboard` tags — so the document still lists every route the server answers:
 *
 * - `GET /_admin/platforms` (operator): the platforms to switch between;
 * - `GET {BASE_PATH}/dashboard/internal-accounts/:accountId/postings` (platform, VIEW): the ledger
 *   postings behind an internal account's balance, newest first, paged with the API's cursors.
 */
import { Type, type FastifyPluginAsyncTypebox, type Static } from '@fastify/type-provider-typebox';
import type { AppContext } from '../context.ts';
import { platformOf } from '../http/auth.ts';
import { errors } from '../http/errors.ts';
import { toPage, pageRequest } from '../http/pagination.ts';
import { DateTime, errorResponses, IdString, Obj, Page, PageQueryFields } from '../http/schemas.ts';
import { PlatformSchema } from '../modules/admin/admin.routes.ts';
import { platformToWire } from '../modules/platforms/platforms.service.ts';
import { accountExists, listPlatforms, listPostings, type PostingRow } from './dashboard.repo.ts';

export const PostingSchema = Obj(
  {
    entryId: Type.String({ description: 'The ledger entry the posting belongs to' }),
    seq: Type.Integer({ minimum: 0, description: "The posting's position in its entry" }),
    kind: Type.String({ description: 'What caused the movement (SANDBOX_FUNDING, PAYMENT_DEBIT, …)' }),
    referenceId: Type.String({ description: 'The resource the movement belongs to (a transaction, a quote, the account …)' }),
    currency: Type.String(),
    bucket: Type.Union([Type.Literal('AVAILABLE'), Type.Literal('PENDING')]),
    amount: Type.Integer({ description: 'Signed, in the currency’s smallest unit' }),
    createdAt: DateTime,
  },
  { title: 'DashboardPosting' },
);
type PostingWire = Static<typeof PostingSchema>;

/** Postings are keyed by (entryId, seq): the cursor's id is both, so a page may end inside an entry. */
const postingKey = (r: PostingRow) => `${r.entry_id}#${r.seq}`;
function parsePostingKey(id: string | undefined): { entryId: string; seq: number } | undefined {
  if (id === undefined) return undefined;
  const m = /^(.+)#(\d{1,9})$/.exec(id);
  if (!m) throw errors.invalidField('cursor', 'is not a cursor returned by this API');
  return { entryId: m[1]!, seq: Number(m[2]) };
}

const postingToWire = (r: PostingRow): PostingWire => ({
  entryId: r.entry_id,
  seq: r.seq,
  kind: r.kind,
  referenceId: r.reference_id,
  currency: r.currency,
  bucket: r.bucket === 'PENDING' ? 'PENDING' : 'AVAILABLE',
  amount: r.amount,
  createdAt: r.created_at,
});

/** Operator routes for the dashboard (registered at the root, beside the other /_admin routes). */
export function operatorRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/_admin/platforms',
      {
        config: { auth: 'admin' },
        schema: {
          operationId: 'adminListPlatforms',
          tags: ['Admin'],
          summary: 'List platforms, newest first (the dashboard’s platform switcher)',
          querystring: Obj({ ...PageQueryFields }),
          response: { 200: Page(PlatformSchema, 'PlatformListResponse'), ...errorResponses(400, 401, 404) },
        },
      },
      async (req) => {
        const page = pageRequest(req.query);
        const { rows, totalCount } = await listPlatforms(ctx.db, page);
        return toPage(rows, page.limit, totalCount, platformToWire);
      },
    );
  };
}

/** Platform routes for the dashboard (registered under BASE_PATH). */
export function dashboardApiRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/dashboard/internal-accounts/:accountId/postings',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'dashboardListPostings',
          tags: ['Dashboard'],
          summary: 'The ledger postings behind an internal account, newest first (dashboard)',
          params: Obj({ accountId: IdString('InternalAccount:019542f5-b3e7-7d02-8000-000000000001') }),
          querystring: Obj({ ...PageQueryFields }),
          response: { 200: Page(PostingSchema, 'DashboardPostingListResponse'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        const page = pageRequest(req.query);
        const after = parsePostingKey(page.afterId);
        if (!(await accountExists(ctx.db, platform.id, req.params.accountId)))
          throw errors.notFound('Internal account', req.params.accountId);
        const { rows, totalCount } = await listPostings(ctx.db, platform.id, req.params.accountId, { limit: page.limit, after });
        return toPage(
          rows.map((r) => ({ ...r, id: postingKey(r) })),
          page.limit,
          totalCount,
          postingToWire,
        );
      },
    );
  };
}
