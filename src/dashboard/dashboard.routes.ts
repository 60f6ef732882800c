/**
 * The dashboard's static files (built by scripts/build.mjs from web/dashboard/ into dist/dashboard/):
 * served from memory on /dashboard* only, so nothing here runs on an API request. Read once, on the
 * first request for them. Views are hash routes (#/customers …), so the page itself is one file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { errors } from '../http/errors.ts';

/**
 * Nothing from elsewhere: scripts, styles, images and API calls come from this server only; the
 * page cannot be framed, and nothing is sent as a Referer.
 */
export const DASHBOARD_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const FILES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

/**
 * Where the build put the files: dist/dashboard/ beside the running bundle (dist/cli/ or
 * dist/chunks/), or the checkout's dist/dashboard/ when the server runs from src/ (tests).
 */
function dashboardDir(): string | undefined {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.resolve(here, '../dashboard'), path.resolve(here, '../../dist/dashboard')];
  return candidates.find((d) => fs.existsSync(path.join(d, 'index.html')));
}

let loaded: Map<string, Buffer> | undefined;
function files(): Map<string, Buffer> {
  if (loaded) return loaded;
  const dir = dashboardDir();
  if (!dir) throw errors.notFound('Dashboard', 'build (run `npm run build`)');
  loaded = new Map(Object.keys(FILES).map((f) => [f, fs.readFileSync(path.join(dir, f))]));
  return loaded;
}

function send(reply: FastifyReply, name: string) {
  const body = files().get(name);
  if (!body) throw errors.notFound('Dashboard file', name);
  return reply
    .header('content-security-policy', DASHBOARD_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-cache')
    .type(FILES[name]!)
    .send(body);
}

export function dashboardRoutes(): FastifyPluginAsync {
  return async (app) => {
    const config = { auth: 'none' as const };
    app.get('/dashboard', { config, schema: { hide: true } }, async (_req, reply) => reply.redirect('/dashboard/', 302));
    app.get('/dashboard/', { config, schema: { hide: true } }, async (_req, reply) => send(reply, 'index.html'));
    app.get<{ Params: { file: string } }>('/dashboard/:file', { config, schema: { hide: true } }, async (req, reply) => {
      if (!Object.hasOwn(FILES, req.params.file) || req.params.file === 'index.html')
        throw errors.notFound('Dashboard file', req.params.file);
      return send(reply, req.params.file);
    });
  };
}
