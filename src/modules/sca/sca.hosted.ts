/**
 * The hosted 2FA-reset liveness page: `GET /hosted/sca-liveness/{token}` shows it, `POST` submits
 * its form (`outcome=pass|fail`). As the hosted KYC page (kyc-links.hosted.ts): hidden from the
 * OpenAPI document, no credentials (the token in the path is the credential; the request log shows
 * the route pattern, never the path), HTML in every answer, a form body instead of JSON, a child
 * plugin so its form parser and HTML error handler stay out of the API's routes.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errors } from '../../http/errors.ts';
import { toApiError } from '../../http/error-handler.ts';
import { ok, writeFor } from '../../http/write.ts';
import { LIVENESS_CSP, livenessErrorPage, livenessPage } from './sca.page.ts';
import { openResetPage, resetPlatformOf, submitResetPage } from './sca.resets.service.ts';

/** Where the page is served, under the API's base path. */
export const HOSTED_LIVENESS_PATH = '/hosted/sca-liveness/';

const FORM_BODY_LIMIT = 256;

function sendPage(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': LIVENESS_CSP,
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
    })
    .code(status)
    .send(body);
}

/** The form: exactly one `outcome`, pass or fail. */
function parseForm(text: string): 'PASS' | 'FAIL' {
  const params = [...new URLSearchParams(text)];
  for (const [k] of params) if (k !== 'outcome') throw errors.invalidField(k, 'is not a field of this form');
  const values = params.map(([, v]) => v);
  if (values.length !== 1 || (values[0] !== 'pass' && values[0] !== 'fail'))
    throw errors.invalidField('outcome', 'must be pass or fail, once');
  return values[0] === 'pass' ? 'PASS' : 'FAIL';
}

const tokenOf = (req: FastifyRequest) => (req.params as { token: string }).token;

export function hostedLivenessRoutes(ctx: AppContext): FastifyPluginAsync {
  return async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_req, body, done) => {
      try {
        done(null, { outcome: parseForm(body as string) });
      } catch (err) {
        done(err as Error, undefined);
      }
    });
    app.setErrorHandler((err, req, reply) => {
      const code = (err as { code?: string }).code;
      const e =
        code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
          ? errors.invalidInput('The form must be sent as application/x-www-form-urlencoded')
          : toApiError(err, req, FORM_BODY_LIMIT);
      return sendPage(reply, e.status, livenessErrorPage(e.status, e.message));
    });

    const config = { auth: 'none', secretInPath: true } as const;
    const url = `${HOSTED_LIVENESS_PATH}:token`;

    app.get(url, { config, schema: { hide: true } }, async (req, reply) => {
      const view = await openResetPage(ctx, tokenOf(req));
      return sendPage(reply, view.kind === 'missing' ? 404 : 200, livenessPage(view));
    });

    app.post(url, { config, schema: { hide: true }, bodyLimit: FORM_BODY_LIMIT }, async (req, reply) => {
      const token = tokenOf(req);
      const platformId = await resetPlatformOf(ctx.db, token);
      if (platformId === undefined) return sendPage(reply, 404, livenessPage({ kind: 'missing' }));
      const form = req.body as { outcome?: 'PASS' | 'FAIL' } | undefined;
      if (form?.outcome === undefined) throw errors.invalidField('outcome', 'is required');
      const outcome = form.outcome;
      reply.headers({ 'content-type': 'text/html; charset=utf-8', 'content-security-policy': LIVENESS_CSP, 'cache-control': 'no-store' });
      return writeFor(ctx, platformId, req, reply, undefined, async (u) => {
        const view = await submitResetPage(u, token, outcome);
        if (view.kind === 'missing') return { status: 404, body: livenessPage(view) };
        // A reset no longer waiting for its check (submitted already, expired …) shows its state: 409.
        return view.kind === 'closed' && view.submitted === true ? ok(livenessPage(view)) : { status: 409, body: livenessPage(view) };
      });
    });

    app.route({
      method: ['PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      url,
      config,
      schema: { hide: true },
      handler: async (_req, reply) => {
        reply.header('allow', 'GET, HEAD, POST');
        return sendPage(reply, 405, livenessErrorPage(405, 'This page takes GET and POST only'));
      },
    });
  };
}
