/**
 * The card reveal page: `GET /hosted/card-reveal/{token}` shows a card's number, CVV and expiry once.
 * A browser's page, not an API operation: hidden from the OpenAPI document, no credentials (the
 * token in the path is the credential; the request log shows the route pattern, never the path),
 * HTML in every answer, `Cache-Control: no-store`. Opening it spends the token, so it answers GET
 * only: HEAD (a link preview) and every other method are 405 and spend nothing.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { toApiError } from '../../http/error-handler.ts';
import { ok, writeFor } from '../../http/write.ts';
import { REVEAL_CSP, revealedPage, revealErrorPage, unrevealablePage } from './card-reveal.page.ts';
import { openReveal, revealPlatform, type Unrevealable } from './card-reveal.service.ts';

/** Where the page is served, under the API's base path (beside the hosted KYC page). */
export const HOSTED_REVEAL_PATH = '/hosted/card-reveal/';

function setPageHeaders(reply: FastifyReply): FastifyReply {
  return reply.headers({
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': REVEAL_CSP,
    'cache-control': 'no-store',
    pragma: 'no-cache',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  });
}

const statusOf = (u: Unrevealable) => (u.kind === 'missing' ? 404 : 410);
const tokenOf = (req: FastifyRequest) => (req.params as { token: string }).token;

export function hostedRevealRoutes(ctx: AppContext): FastifyPluginAsync {
  return async (app) => {
    app.setErrorHandler((err, req, reply) => {
      const e = toApiError(err, req, 0);
      return setPageHeaders(reply).code(e.status).send(revealErrorPage(e.status, e.message));
    });

    const config = { auth: 'none', secretInPath: true } as const;
    const url = `${HOSTED_REVEAL_PATH}:token`;

    app.get(url, { config, exposeHeadRoute: false, schema: { hide: true } }, async (req, reply) => {
      const token = tokenOf(req);
      // The token names its platform: opening the page is a write of that platform (it spends the token).
      const platformId = await revealPlatform(ctx.db, token);
      setPageHeaders(reply);
      if (platformId === undefined) return reply.code(404).send(unrevealablePage({ kind: 'missing' }));
      return writeFor(ctx, platformId, req, reply, undefined, async (u) => {
        const shown = await openReveal(u, token);
        if (shown.kind !== 'open') return { status: statusOf(shown), body: unrevealablePage(shown) };
        return ok(revealedPage(shown));
      });
    });

    app.route({
      method: ['HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      url,
      config,
      schema: { hide: true },
      handler: async (_req, reply) => {
        reply.header('allow', 'GET');
        return setPageHeaders(reply).code(405).send(revealErrorPage(405, 'This page takes GET only'));
      },
    });
  };
}
