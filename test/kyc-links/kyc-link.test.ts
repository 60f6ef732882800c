/**
 * POST /customers/{customerId}/kyc-link (createCustomerKycLink): the link and its shape for both
 * customer types, what it leaves alone, the live CLI's exact request, redirectUri rules, idempotent
 * replays, and bad input, auth, permissions, another platform's and deleted customers.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicHeader, Client, expectError } from '../helpers/http.ts';
import { businessBody, createCustomer, individualBody } from '../helpers/kyc.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { eventTypes, newLink, requestLink, tokenOf } from './helpers.ts';

let srv: TestServer;
let p: PlatformHandle;
let other: PlatformHandle;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  other = await srv.newPlatform();
});
afterAll(async () => srv.close());

const DAY_MS = 24 * 3600_000;
const unverified = () => createCustomer(p.api, individualBody({ fullName: 'Kim Link 003' }));

describe('the link', () => {
  it('is a fresh single-use URL to the hosted page with its expiry and provider, and changes nothing on the customer', async () => {
    const c = await unverified();
    expect(c.kycStatus).toBe('UNVERIFIED');
    const before = Date.now();
    const res = await requestLink(p.api, c.id, {});
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['expiresAt', 'kycUrl', 'provider']);
    expect(res.body.kycUrl).toMatch(new RegExp(`^${srv.baseUrl}/hosted/kyc/[A-Za-z0-9_-]{43}$`));
    expect(res.body.provider).toBe('SUMSUB');
    const expires = Date.parse(res.body.expiresAt);
    expect(expires).toBeGreaterThanOrEqual(before + DAY_MS - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + DAY_MS + 1000);

    const again = await newLink(p.api, c.id);
    expect(again.kycUrl).not.toBe(res.body.kycUrl);
    const after = await p.api.get(`/customers/${c.id}`);
    expect(after.body).toEqual(c);
    expect(await eventTypes(srv, p.id, c.id)).toEqual([]);
    expect((await p.api.get('/verifications', { query: { customerId: c.id } })).body.data).toEqual([]);
  });

  it('stores only a hash of the token, with the platform and customer it belongs to', async () => {
    const c = await unverified();
    const link = await newLink(p.api, c.id, { redirectUri: 'https://app.example.com/done' });
    const token = tokenOf(link.kycUrl);
    const rows = await srv.app.ctx.db.selectFrom('kyc_links').selectAll().where('customer_id', '=', c.id).execute();
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row).toMatchObject({ platform_id: p.id, customer_id: c.id, redirect_uri: 'https://app.example.com/done', used_at: null });
    expect(row.expires_at).toBe(link.expiresAt);
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(token);
  });

  it('is made for a business too (the KYB flow), with the same shape', async () => {
    const b = await createCustomer(p.api, businessBody());
    expect(b.kybStatus).toBe('UNVERIFIED');
    const link = await newLink(p.api, b.id);
    expect(link.kycUrl).toMatch(/\/hosted\/kyc\/[A-Za-z0-9_-]{43}$/);
    expect((await p.api.get(`/customers/${b.id}`)).body.kybStatus).toBe('UNVERIFIED');
  });

  it('is made for a customer already decided (its page then has nothing to change)', async () => {
    const approved = await createCustomer(p.api, individualBody());
    expect(approved.kycStatus).toBe('APPROVED');
    await newLink(p.api, approved.id);
  });

  it('answers the live CLI `customers kyc-link` as sent: JSON.stringify({redirectUri}) with or without --redirect-uri', async () => {
    const c = await unverified();
    // cli/src/commands/customers.ts: body {redirectUri: options.redirectUri}; client.ts: Basic auth,
    // Accept and Content-Type application/json, the body JSON.stringify'd ({} without the option).
    const cli = new Client(srv.baseUrl);
    const headers = { authorization: basicHeader(p.creds), accept: 'application/json', 'content-type': 'application/json' };
    const bare = await cli.request('POST', `/customers/${c.id}/kyc-link`, undefined, {
      headers,
      raw: JSON.stringify({ redirectUri: undefined }),
    });
    expect(bare.status, bare.text).toBe(201);
    const withUri = await cli.request('POST', `/customers/${c.id}/kyc-link`, undefined, {
      headers,
      raw: JSON.stringify({ redirectUri: 'https://yourapp.com/onboarding-complete' }),
    });
    expect(withUri.status, withUri.text).toBe(201);
    expect(withUri.body.provider).toBe('SUMSUB');
  });

  it('may be asked for without any body', async () => {
    const c = await unverified();
    const res = await requestLink(p.api, c.id);
    expect(res.status, res.text).toBe(201);
  });

  it('names the host the API was reached at (the Host header), or the local address when that is no plain host', async () => {
    const c = await unverified();
    const { port } = new URL(srv.origin);
    const withHost = (host: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: `/2025-10-13/customers/${c.id}/kyc-link`,
            headers: { host, authorization: basicHeader(p.creds), 'content-type': 'application/json' },
          },
          (res) => {
            let text = '';
            res.on('data', (d: Buffer) => {
              text += d.toString('utf8');
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
          },
        );
        req.on('error', reject);
        req.end('{}');
      });
    const named = await withHost('corridor.example:8443');
    expect(named.status, named.text).toBe(201);
    expect(JSON.parse(named.text).kycUrl).toMatch(/^http:\/\/corridor\.example:8443\/2025-10-13\/hosted\/kyc\/[A-Za-z0-9_-]{43}$/);
    for (const odd of ['evil.example/phish?x=', 'user@evil.example']) {
      const res = await withHost(odd);
      expect(res.status, res.text).toBe(201);
      expect(JSON.parse(res.text).kycUrl, odd).toMatch(
        new RegExp(`^http://127\\.0\\.0\\.1:${port}/2025-10-13/hosted/kyc/[A-Za-z0-9_-]{43}$`),
      );
    }
  });
});

describe('contact verification first', () => {
  it('is a 409 while a channel the customer must verify is PENDING, and made once every one is VERIFIED', async () => {
    // A sandbox customer in the EEA must verify its email and phone (modules/contact-verification).
    const c = await createCustomer(
      p.api,
      individualBody({ fullName: 'Eva Contact 003', region: 'DE', email: 'eva@example.com', phoneNumber: '+4915112345678' }),
    );
    expect(c.contactVerification).toEqual({ email: 'PENDING', phone: 'PENDING' });
    const both = expectError(await requestLink(p.api, c.id, {}), 409, 'CONFLICT');
    expect(both.body.details).toEqual({ reason: 'CONTACT_VERIFICATION_INCOMPLETE', channels: ['email', 'phone'] });

    const verify = async (path: string) => {
      expect((await p.api.post(`/customers/${c.id}/${path}`)).status).toBe(204);
      const res = await p.api.post(`/customers/${c.id}/${path}/confirm`, { code: '123456' });
      expect(res.status, res.text).toBe(200);
    };
    await verify('verify-email');
    const phone = expectError(await requestLink(p.api, c.id, {}), 409, 'CONFLICT');
    expect(phone.body.details.channels).toEqual(['phone']);
    await verify('verify-phone');
    expect((await requestLink(p.api, c.id, {})).status).toBe(201);
  });
});

describe('Idempotency-Key', () => {
  it('replays the first response (the same link) and refuses the key with another body', async () => {
    const c = await unverified();
    const key = `kyc-${c.id}`;
    const first = await requestLink(p.api, c.id, {}, { 'idempotency-key': key });
    expect(first.status, first.text).toBe(201);
    const replay = await requestLink(p.api, c.id, {}, { 'idempotency-key': key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotency-hit')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(await srv.app.ctx.db.selectFrom('kyc_links').select('token_hash').where('customer_id', '=', c.id).execute()).toHaveLength(1);
    expectError(await requestLink(p.api, c.id, { redirectUri: 'https://app.example.com/x' }, { 'idempotency-key': key }), 409, 'CONFLICT');
  });
});

describe('redirectUri', () => {
  it('takes https://, and http:// on a sandbox platform (local development)', async () => {
    const c = await unverified();
    for (const uri of [
      'https://app.example.com/onboarding/completed?step=kyc#top',
      'http://localhost:3000/done',
      'http://192.0.2.10/done',
    ]) {
      expect((await requestLink(p.api, c.id, { redirectUri: uri })).status, uri).toBe(201);
    }
  });

  it('refuses anything a browser should not be sent to, naming the field', async () => {
    const c = await unverified();
    for (const uri of [
      'javascript:alert(1)',
      'data:text/html,hi',
      'ftp://files.example.com/x',
      'mailto:someone@example.com',
      'https://user:pass@app.example.com/',
      '/relative/path',
      'not a uri',
      '',
      `https://app.example.com/${'a'.repeat(2048)}`,
    ]) {
      const res = await requestLink(p.api, c.id, { redirectUri: uri });
      expectError(res, 400, 'INVALID_INPUT');
      expect(
        res.body.details.errors.map((e: { field: string }) => e.field),
        uri,
      ).toContain('redirectUri');
    }
    expect(await srv.app.ctx.db.selectFrom('kyc_links').select('token_hash').where('customer_id', '=', c.id).execute()).toEqual([]);
  });

  it('on a PRODUCTION platform, takes http:// only to a loopback host', async () => {
    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    const c = await createCustomer(prod.api, individualBody());
    expect((await requestLink(prod.api, c.id, { redirectUri: 'https://app.example.com/done' })).status).toBe(201);
    for (const uri of ['http://localhost:3000/done', 'http://127.0.0.1/done', 'http://[::1]:8080/done']) {
      expect((await requestLink(prod.api, c.id, { redirectUri: uri })).status, uri).toBe(201);
    }
    const res = await requestLink(prod.api, c.id, { redirectUri: 'http://app.example.com/done' });
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.body.details.errors[0].field).toBe('redirectUri');
  });
});

describe('bad input', () => {
  it('rejects unknown fields, wrong types and a body that is not an object', async () => {
    const c = await unverified();
    const unknown = await requestLink(p.api, c.id, { redirectUri: 'https://a.example.com', locale: 'en' });
    expectError(unknown, 400, 'INVALID_INPUT');
    expect(unknown.body.details.errors.map((e: { field: string }) => e.field)).toContain('locale');
    expectError(await requestLink(p.api, c.id, { redirectUri: 42 }), 400, 'INVALID_INPUT');
    expectError(await requestLink(p.api, c.id, ['https://a.example.com']), 400, 'INVALID_INPUT');
    expectError(await requestLink(p.api, c.id, 'https://a.example.com'), 400, 'INVALID_INPUT');
    expectError(await p.api.post(`/customers/${c.id}/kyc-link`, undefined, { raw: '{"redirectUri":' }), 400, 'INVALID_INPUT');
  });
});

describe('access', () => {
  it('needs credentials (401) and the MANAGE permission (403)', async () => {
    const c = await unverified();
    expectError(await requestLink(srv.anon, c.id, {}), 401, 'UNAUTHORIZED');
    expectError(await requestLink(p.api.with({ basic: { id: p.creds.id, secret: 'wrong' } }), c.id, {}), 401, 'UNAUTHORIZED');
    const view = await p.api.post('/tokens', { name: 'kyc view', permissions: ['VIEW', 'TRANSACT'] });
    expect(view.status, view.text).toBe(201);
    const viewer = p.api.with({ basic: { id: view.body.clientId, secret: view.body.clientSecret } });
    expectError(await requestLink(viewer, c.id, {}), 403, 'FORBIDDEN');
  });

  it("answers 404 for an unknown customer and another platform's, and 410 for a deleted one", async () => {
    const c = await unverified();
    expectError(await requestLink(other.api, c.id, {}), 404, 'USER_NOT_FOUND');
    expectError(await requestLink(p.api, 'Customer:019542f5-b3e7-7d02-8000-000000000000', {}), 404, 'USER_NOT_FOUND');
    expectError(await requestLink(p.api, 'nonsense', {}), 404, 'USER_NOT_FOUND');
    expect((await p.api.delete(`/customers/${c.id}`)).status).toBe(200);
    expectError(await requestLink(p.api, c.id, {}), 410, 'CUSTOMER_DELETED');
    expect(await srv.app.ctx.db.selectFrom('kyc_links').select('token_hash').where('customer_id', '=', c.id).execute()).toEqual([]);
  });

  it('takes a percent-encoded customer id in the path', async () => {
    const c = await unverified();
    const res = await p.api.post(`/customers/${encodeURIComponent(c.id)}/kyc-link`, {});
    expect(res.status, res.text).toBe(201);
  });
});
