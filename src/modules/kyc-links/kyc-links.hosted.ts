/**
 * The hosted verification page: `GET /hosted/kyc/{token}` shows it, `POST` submits its form. A
 * browser's page, not an API operation: hidden from the OpenAPI document, no credentials (the
 * token in the path is the credential; the request log shows the route pattern, never the path),
 * HTML in every answer — errors included — and a form body instead of JSON. It is a child plugin
 * so that its form parser and HTML error handler stay out of the API's routes.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { toApiError } from '../../http/error-handler.ts';
import { ok, writeFor } from '../../http/write.ts';
import { kycLinkErrors } from './kyc-links.errors.ts';
import { contentSecurityPolicy, errorPage, formPage, redirectPage, submittedPage, unusablePage } from './kyc-links.page.ts';
import { linkPlatform, openKycLink, submitKycLink, type Unusable } from './kyc-links.service.ts';

/** Where the page is served, under the API's base path; nothing of the live API lives under /hosted. */
export const HOSTED_KYC_PATH = '/hosted/kyc/';

/** The form has one short field; anything longer is not this page's form. */
const FORM_BODY_LIMIT = 1024;
/** The fields the form has. */
const FORM_FIELDS = new Set(['outcome']);

/** Headers of every answer: no caching, no referrer (the URL holds the token), no framing, no sniffing. */
function setPageHeaders(reply: FastifyReply, redirectUri?: string): FastifyReply {
  return reply.headers({
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': contentSecurityPolicy(redirectUri),
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
  });
}

function sendPage(reply: FastifyReply, status: number, body: string, redirectUri?: string): FastifyReply {
  return setPageHeaders(reply, redirectUri).code(status).send(body);
}

const unusableStatus = (u: Unusable) => (u.kind === 'missing' ? 404 : 410);

/** The form's fields: each known field at most once, nothing else. */
function parseForm(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(text)) {
    if (!FORM_FIELDS.has(k)) throw kycLinkErrors.badFormField(k, 'is not a field of this form');
    if (Object.hasOwn(out, k)) throw kycLinkErrors.badFormField(k, 'was sent more than once');
    out[k] = v;
  }
  return out;
}

const tokenOf = (req: FastifyRequest) => (req.params as { token: string }).token;

export function hostedKycRoutes(ctx: AppContext): FastifyPluginAsync {
  return async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_req, body, done) => {
      try {
        done(null, parseForm(body as string));
      } catch (err) {
        done(err as Error, undefined);
      }
    });
    app.setErrorHandler((err, req, reply) => {
      const code = (err as { code?: string }).code;
      const e = code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? kycLinkErrors.notAForm() : toApiError(err, req, FORM_BODY_LIMIT);
      reply.removeHeader('location');
      return sendPage(reply, e.status, errorPage(e.status, e.message));
    });

    const config = { auth: 'none', secretInPath: true } as const;
    const url = `${HOSTED_KYC_PATH}:token`;

    app.get(url, { config, schema: { hide: true } }, async (req, reply) => {
      const view = await openKycLink(ctx, tokenOf(req));
      if (view.kind !== 'open') return sendPage(reply, unusableStatus(view), unusablePage(view));
      return sendPage(reply, 200, formPage(view), view.redirectUri);
    });

    app.post(url, { config, schema: { hide: true }, bodyLimit: FORM_BODY_LIMIT }, async (req, reply) => {
      const token = tokenOf(req);
      // The token names its platform: the submission is a write of that platform (as a device code's redemption is).
      const platformId = await linkPlatform(ctx.db, token);
      if (platformId === undefined) return sendPage(reply, 404, unusablePage({ kind: 'missing' }));
      const form = (req.body ?? {}) as { outcome?: string };
      setPageHeaders(reply);
      return writeFor(ctx, platformId, req, reply, undefined, async (u) => {
        const done = await submitKycLink(u, token, form);
        if (done.kind !== 'submitted') return { status: unusableStatus(done), body: unusablePage(done) };
        if (done.redirectUri === undefined) return ok(submittedPage(done));
        // 303: the browser follows with a GET. Set here, from the link's row (a retried unit sets the same).
        reply.header('location', done.redirectUri);
        return { status: 303, body: redirectPage(done.redirectUri) };
      });
    });

    // Other methods: 405 here rather than from the app's not-found handler, whose log line would show the path.
    app.route({
      method: ['PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      url,
      config,
      schema: { hide: true },
      handler: async (_req, reply) => {
        reply.header('allow', 'GET, HEAD, POST');
        return sendPage(reply, 405, errorPage(405, 'This page takes GET and POST only'));
      },
    });
  };
}
