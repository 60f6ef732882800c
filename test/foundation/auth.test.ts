/**
 * Authentication over real HTTP: missing, malformed and wrong Basic credentials; platform isolation
 * (another platform's ids are 404); percent-encoded ids; token revocation taking effect at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, expectError, type Res } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { checkEnvelope } from './util.ts';

let srv: TestServer;
let a: PlatformHandle;
let b: PlatformHandle;

beforeAll(async () => {
  srv = await startServer();
  [a, b] = await Promise.all([srv.newPlatform({ name: 'A' }), srv.newPlatform({ name: 'B' })]);
});
afterAll(async () => srv.close());

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

function expect401(res: Res): void {
  expectError(res, 401, 'UNAUTHORIZED');
  checkEnvelope(res);
  expect(res.headers.get('www-authenticate')).toMatch(/^Basic/);
  expect(res.body.details).toBeUndefined();
}

async function tokenIdOf(p: PlatformHandle): Promise<string> {
  const res = await p.api.get('/tokens');
  expect(res.status).toBe(200);
  const mine = res.body.data.find((t: { clientId: string }) => t.clientId === p.creds.id);
  expect(mine).toBeDefined();
  return mine.id as string;
}

async function accountOf(p: PlatformHandle): Promise<string> {
  const res = await p.api.get('/platform/internal-accounts');
  expect(res.status).toBe(200);
  return res.body.data[0].id as string;
}

describe('missing or bad credentials → 401 UNAUTHORIZED', () => {
  const routes: [string, string][] = [
    ['GET', '/config'],
    ['GET', '/tokens'],
    ['GET', '/platform/internal-accounts'],
  ];

  it.each(routes)('%s %s without Authorization', async (method, path) => {
    expect401(await srv.anon.request(method, path));
  });

  it('rejects malformed Authorization headers', async () => {
    const headers = [
      `Bearer ${a.creds.secret}`, // not Basic
      'Basic', // no credentials
      'Basic !!!not-base64!!!', // bad base64 alphabet
      `Basic ${b64(`${a.creds.id}${a.creds.secret}`)}`, // no colon
      `Basic ${b64(`:${a.creds.secret}`)}`, // empty id
      `Basic ${b64(`${a.creds.id}:`)}`, // empty secret
      `Digest username="${a.creds.id}"`,
    ];
    for (const authorization of headers) {
      const res = await srv.anon.get('/platform/internal-accounts', { headers: { authorization } });
      expect401(res);
    }
  });

  it('rejects a wrong secret and an unknown clientId', async () => {
    expect401(await a.api.with({ basic: { id: a.creds.id, secret: `${a.creds.secret}x` } }).get('/config'));
    expect401(await a.api.with({ basic: { id: a.creds.id, secret: b.creds.secret } }).get('/config'));
    expect401(await a.api.with({ basic: { id: '0'.repeat(32), secret: a.creds.secret } }).get('/config'));
    expect401(await a.api.with({ basic: { id: 'x'.repeat(300), secret: a.creds.secret } }).get('/config'));
  });

  it('answers 401 before looking at the body (no validation leak)', async () => {
    expect401(await srv.anon.post('/tokens', { nope: true }));
    expect401(await srv.anon.post('/tokens', undefined, { raw: '{not json' }));
    expect401(await srv.anon.patch('/config', { embeddedWalletConfig: { nope: 1 } }));
  });

  it('the admin API wants its bearer token', async () => {
    const noAuth = await new Client(srv.origin).post('/_admin/platforms', { name: 'x' });
    expectError(noAuth, 401, 'UNAUTHORIZED');
    checkEnvelope(noAuth);
    const wrong = await new Client(srv.origin, { bearer: 'wrong-admin-token-000000' }).post('/_admin/platforms', { name: 'x' });
    expectError(wrong, 401, 'UNAUTHORIZED');
    // A platform token is not an admin token.
    const basic = await new Client(srv.origin, { basic: a.creds }).post('/_admin/platforms', { name: 'x' });
    expectError(basic, 401, 'UNAUTHORIZED');
  });

  it('valid credentials work', async () => {
    const res = await a.api.get('/config');
    expect(res.status).toBe(200);
    checkEnvelope(res);
  });
});

describe('platform isolation: another platform’s ids are 404', () => {
  it('cannot read or delete another platform’s token', async () => {
    const bToken = await tokenIdOf(b);
    const get = await a.api.get(`/tokens/${bToken}`);
    expectError(get, 404, 'TOKEN_NOT_FOUND');
    checkEnvelope(get);
    const del = await a.api.delete(`/tokens/${bToken}`);
    expectError(del, 404, 'TOKEN_NOT_FOUND');
    // B's token is untouched and still works.
    expect((await b.api.get(`/tokens/${bToken}`)).status).toBe(200);
    expect((await b.api.get('/config')).status).toBe(200);
  });

  it('lists only its own tokens and accounts', async () => {
    const aTokens = await a.api.get('/tokens');
    const bTokens = await b.api.get('/tokens');
    const aIds = new Set(aTokens.body.data.map((t: { id: string }) => t.id));
    for (const t of bTokens.body.data) expect(aIds.has(t.id)).toBe(false);
    const aAcc = await accountOf(a);
    const bAcc = await accountOf(b);
    expect(aAcc).not.toBe(bAcc);
    const list = await a.api.get('/platform/internal-accounts');
    expect(list.body.data.map((x: { id: string }) => x.id)).toEqual([aAcc]);
  });

  it('cannot fund another platform’s internal account', async () => {
    const bAcc = await accountOf(b);
    const res = await a.api.post(`/sandbox/internal-accounts/${bAcc}/fund`, { amount: 100 });
    expectError(res, 404, 'REFERENCE_NOT_FOUND');
    checkEnvelope(res);
    const after = await b.api.get('/platform/internal-accounts');
    expect(after.body.data[0].balance.amount).toBe(0);
    expect((await srv.ledger(b.id)).ok).toBe(true);
  });

  it('unknown ids are 404 too', async () => {
    expectError(await a.api.get('/tokens/Token:00000000-0000-7000-8000-000000000000'), 404, 'TOKEN_NOT_FOUND');
    expectError(
      await a.api.post('/sandbox/internal-accounts/InternalAccount:00000000-0000-7000-8000-000000000000/fund', { amount: 1 }),
      404,
      'REFERENCE_NOT_FOUND',
    );
  });
});

describe('ids in paths', () => {
  it('accepts ids raw and percent-encoded', async () => {
    const id = await tokenIdOf(a);
    expect(id).toMatch(/^Token:/);
    const raw = await a.api.get(`/tokens/${id}`);
    expect(raw.status).toBe(200);
    const enc = await a.api.get(`/tokens/${encodeURIComponent(id)}`);
    expect(enc.status).toBe(200);
    expect(enc.body).toEqual(raw.body);
    const lower = await a.api.get(`/tokens/${id.replace(':', '%3a')}`);
    expect(lower.status).toBe(200);

    const acc = await accountOf(a);
    const fund = await a.api.post(`/sandbox/internal-accounts/${encodeURIComponent(acc)}/fund`, { amount: 5 });
    expect(fund.status).toBe(200);
    expect(fund.body.id).toBe(acc);
    expect(fund.body.balance.amount).toBe(5);
    expect((await srv.ledger(a.id)).ok).toBe(true);
  });

  it('a malformed percent-encoding is a JSON 400, not a crash', async () => {
    const res = await a.api.get('/tokens/Token%ZZ');
    expect(res.status).toBe(400);
    checkEnvelope(res);
    expect(res.body.code).toBe('INVALID_INPUT');
    const long = await a.api.get(`/tokens/Token:${'x'.repeat(300)}`);
    expect(long.status).toBe(400);
    checkEnvelope(long);
  });
});

describe('token lifecycle and authentication', () => {
  it('a deleted token stops authenticating at once', async () => {
    const created = await a.api.post('/tokens', { name: 'short-lived', permissions: ['VIEW'] });
    expect(created.status).toBe(201);
    const t = a.api.with({ basic: { id: created.body.clientId, secret: created.body.clientSecret } });
    expect((await t.get('/config')).status).toBe(200);

    const del = await a.api.delete(`/tokens/${created.body.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect401(await t.get('/config'));
    expectError(await a.api.get(`/tokens/${created.body.id}`), 404, 'TOKEN_NOT_FOUND');
    expectError(await a.api.delete(`/tokens/${created.body.id}`), 404, 'TOKEN_NOT_FOUND');
  });

  it('a token cannot delete itself', async () => {
    const created = await a.api.post('/tokens', { name: 'self-deleter', permissions: ['MANAGE', 'VIEW'] });
    expect(created.status).toBe(201);
    const t = a.api.with({ basic: { id: created.body.clientId, secret: created.body.clientSecret } });
    const res = await t.delete(`/tokens/${created.body.id}`);
    expectError(res, 400, 'INVALID_INPUT');
    checkEnvelope(res);
    expect((await t.get(`/tokens/${created.body.id}`)).status).toBe(200);

    // The platform's own bootstrap token cannot delete itself either, but another token may.
    const ownId = await tokenIdOf(a);
    expectError(await a.api.delete(`/tokens/${ownId}`), 400, 'INVALID_INPUT');
    expect((await t.delete(`/tokens/${encodeURIComponent(ownId)}`)).status).toBe(204);
    expect401(await a.api.get('/config'));
    // Hand the platform the surviving token so later tests in this file keep working.
    a = { ...a, creds: { id: created.body.clientId, secret: created.body.clientSecret }, api: t };
    expect((await a.api.get('/config')).status).toBe(200);
  });
});
