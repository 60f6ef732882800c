/**
 * Hostile review of /docs (issue #25): Swagger UI's static assets and the magic values page serve
 * only what they mean to — no path (plain, dot-dot, or percent-encoded) reaches a file outside the
 * UI's own assets (package.json, the data directory, the source) — and the public pages carry no
 * secret and no platform data.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rawGet } from '../helpers/http.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => srv.close());

it('no docs path reaches a file outside the UI assets', async () => {
  const attempts = [
    '/docs/../package.json',
    '/docs/static/../package.json',
    '/docs/static/../../package.json',
    '/docs/static/../../../package.json',
    '/docs/static/..%2f..%2f..%2fpackage.json',
    '/docs/static/%2e%2e/%2e%2e/%2e%2e/package.json',
    '/docs/static/%252e%252e/package.json',
    '/docs/static/....//....//package.json',
    '/docs/static/..\\..\\..\\package.json',
    '/docs/static/%00/package.json',
    '/docs/static//etc/passwd',
    '/docs/sandbox-magic-values/../../package.json',
  ];
  for (const path of attempts) {
    const res = await rawGet(srv.origin, path);
    expect(res.status, path).toBeLessThan(500);
    expect(res.body, path).not.toContain('"devDependencies"');
    expect(res.body, path).not.toContain('root:x:0:0');
  }
  // The UI's own assets are served.
  expect((await rawGet(srv.origin, '/docs/static/swagger-ui.css')).status).toBe(200);
});

it('the magic values page is public, self-contained and holds no platform data', async () => {
  const p = await srv.newPlatform({ name: 'Secret Platform Name' });
  const res = await fetch(`${srv.origin}/docs/sandbox-magic-values`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
  const text = await res.text();
  expect(text).not.toContain('Secret Platform Name');
  expect(text).not.toContain(p.creds.secret);
  expect(text).not.toMatch(/<script/i);
});
