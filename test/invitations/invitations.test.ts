/**
 * UMA invitations over HTTP: create (with and without an amount and an expiry), read by code, claim
 * (with a signed INVITATION.CLAIMED webhook whose data is the invitation as GET returns it) and
 * cancel; the state machine's refusals (claimed, cancelled, expired on the platform's clock); input
 * errors naming their field; INVITATIONS_NOT_CONFIGURED; another platform's codes and customers are
 * 404 like ones that exist nowhere; the permission each operation needs; concurrent claims.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/webhook-delivery/verify.ts';
import { checkResponse } from '../helpers/conformance.ts';
import { create, individual, type Wire } from '../helpers/customers.ts';
import { Client, expectError, type Res } from '../helpers/http.ts';
import { advance } from '../helpers/payments.ts';
import { uniqueId } from '../helpers/random.ts';
import { startReceiver, waitFor, type Received, type Receiver } from '../helpers/receiver.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';

let srv: TestServer;
let rec: Receiver;
/** A sandbox platform whose webhooks go to `rec`, and its customer who invites. */
let p: PlatformHandle;
let inviterUma: string;
let publicKey: string;

const CODE = /^[0-9abcdefghjkmnpqrstvwxyz]{12}$/;
const USD = { code: 'USD', name: 'United States Dollar', symbol: '$', decimals: 2 };

beforeAll(async () => {
  // A PRODUCTION platform below points its webhooks at a loopback receiver.
  srv = await startServer({ env: { CORRIDOR_WEBHOOK_ALLOW_PRIVATE: 'true' } });
  rec = await startReceiver();
  p = await srv.newPlatform({ name: 'Invitations' });
  expect((await p.api.patch('/config', { webhookEndpoint: rec.url })).status).toBe(200);
  publicKey = (await p.api.get('/webhooks/signing-key')).body.publicKey;
  inviterUma = (await customerOf(p)).umaAddress;
});
afterAll(async () => {
  await srv.close();
  await rec.close();
});

async function customerOf(platform: PlatformHandle, over: Record<string, unknown> = {}): Promise<Wire> {
  return create(platform.api, individual({ platformCustomerId: uniqueId('inviter'), ...over }));
}

async function invite(body: Record<string, unknown> = {}, platform = p, uma = inviterUma): Promise<Wire> {
  const res = await platform.api.post('/invitations', { inviterUma: uma, ...body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

const claim = (code: string, inviteeUma: string, api = p.api) => api.post(`/invitations/${code}/claim`, { inviteeUma });
const cancel = (code: string, api = p.api) => api.post(`/invitations/${code}/cancel`);

const claimedEvents = (code: string): Received[] =>
  rec.received.filter((r) => r.body?.type === 'INVITATION.CLAIMED' && r.body.data?.code === code);

async function storedEvents(platformId: string, code: string): Promise<Wire[]> {
  const rows = await srv.app.ctx.db
    .selectFrom('outbox_events')
    .select(['type', 'payload'])
    .where('platform_id', '=', platformId)
    .where('type', 'like', 'INVITATION.%')
    .execute();
  return rows.map((r) => ({ type: r.type, data: JSON.parse(r.payload) })).filter((e) => e.data.code === code);
}

function expectField(res: Res, status: number, code: string, field: string): void {
  expectError(res, status, code);
  expect(
    (res.body.details?.errors ?? []).map((e: { field: string }) => e.field),
    res.text,
  ).toContain(field);
}

describe('creating an invitation', () => {
  it('answers 201 with a fresh code, its link and PENDING; optional fields are absent when not given', async () => {
    const inv = await invite();
    expect(Object.keys(inv).sort()).toEqual(['code', 'createdAt', 'inviterUma', 'status', 'url']);
    expect(inv.code).toMatch(CODE);
    expect(inv).toMatchObject({ status: 'PENDING', inviterUma, url: `https://uma.me/i/${inv.code}` });
    expect(Date.parse(inv.createdAt)).toBeGreaterThan(Date.now() - 60_000);
    expect((await p.api.get(`/invitations/${inv.code}`)).body).toEqual(inv);
  });

  it('carries firstName, expiresAt (normalised to UTC) and amountToSend in the inviter’s currency', async () => {
    const inv = await invite({ firstName: 'Alice', amountToSend: 5000, expiresAt: '2099-12-31T23:59:59+01:00' });
    expect(inv).toMatchObject({
      status: 'PENDING',
      firstName: 'Alice',
      expiresAt: '2099-12-31T22:59:59.000Z',
      amountToSend: { amount: 5000, currency: USD },
    });
    expect((await p.api.get(`/invitations/${inv.code}`)).body).toEqual(inv);
  });

  it('takes the currency the inviter holds first (EUR), and keeps it when the customer changes', async () => {
    const q = await srv.newPlatform({ currency: 'EUR' });
    const eurCustomer = await customerOf(q);
    const inv = await invite({ amountToSend: 1234 }, q, eurCustomer.umaAddress);
    expect(inv.amountToSend).toEqual({ amount: 1234, currency: { code: 'EUR', name: 'Euro', symbol: '€', decimals: 2 } });
    expect((await q.api.get(`/invitations/${inv.code}`)).body.amountToSend.currency.code).toBe('EUR');
  });

  it('finds the inviter whatever the case of the address, and shows it as stored', async () => {
    const inv = await invite({}, p, inviterUma.toUpperCase());
    expect(inv.inviterUma).toBe(inviterUma);
  });

  it('draws a different code every time', async () => {
    const codes = new Set<string>();
    for (let i = 0; i < 25; i++) codes.add((await invite()).code);
    expect(codes.size).toBe(25);
  });

  it('refuses an inviterUma that is not a UMA address: 400 INVALID_UMA_ADDRESS on the field', async () => {
    for (const bad of [
      '',
      'inviter@uma.domain',
      '$@uma.domain',
      '$a b@uma.domain',
      '$alice@nodot',
      '$alice@-bad-.com',
      `$${'a'.repeat(64)}@x.com`,
    ]) {
      expectField(await p.api.post('/invitations', { inviterUma: bad }), 400, 'INVALID_UMA_ADDRESS', 'inviterUma');
    }
  });

  it('refuses an inviter who is not a customer of the platform: 404 USER_NOT_FOUND, the same for another platform’s and a deleted customer', async () => {
    const domain = inviterUma.slice(inviterUma.indexOf('@'));
    const nobody = await p.api.post('/invitations', { inviterUma: `$nobody${domain}` });
    expectField(nobody, 404, 'USER_NOT_FOUND', 'inviterUma');
    const other = await srv.newPlatform();
    const theirs = await customerOf(other);
    const foreign = await p.api.post('/invitations', { inviterUma: theirs.umaAddress });
    expectField(foreign, 404, 'USER_NOT_FOUND', 'inviterUma');
    expect(foreign.body).toEqual({ ...nobody.body });
    const gone = await customerOf(p);
    expect((await p.api.delete(`/customers/${gone.id}`)).status).toBe(200);
    expectField(await p.api.post('/invitations', { inviterUma: gone.umaAddress }), 404, 'USER_NOT_FOUND', 'inviterUma');
  });

  it('refuses bad fields with 400 INVALID_INPUT naming them, unknown fields included', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ inviterUma, expiresAt: '2020-01-01T00:00:00Z' }, 'expiresAt'],
      [{ inviterUma, expiresAt: 'tomorrow' }, 'expiresAt'],
      [{ inviterUma, expiresAt: '2099-12-31T23:59:60Z' }, 'expiresAt'],
      [{ inviterUma, amountToSend: 0 }, 'amountToSend'],
      [{ inviterUma, amountToSend: -5 }, 'amountToSend'],
      [{ inviterUma, amountToSend: 1.5 }, 'amountToSend'],
      [{ inviterUma, amountToSend: '100' }, 'amountToSend'],
      [{ inviterUma, firstName: '' }, 'firstName'],
      [{ inviterUma, firstName: 'x'.repeat(256) }, 'firstName'],
      [{ inviterUma, inviteeUma: '$someone@uma.domain' }, 'inviteeUma'],
      [{ inviterUma, amount: 100 }, 'amount'],
      [{}, 'inviterUma'],
      [{ inviterUma: 42 }, 'inviterUma'],
    ];
    for (const [body, field] of cases) expectField(await p.api.post('/invitations', body), 400, 'INVALID_INPUT', field);
    expectError(await p.api.post('/invitations'), 400, 'INVALID_INPUT');
  });

  it('refuses an amount beyond the platform’s per-transaction bounds: 400 AMOUNT_OUT_OF_RANGE', async () => {
    expectField(await p.api.post('/invitations', { inviterUma, amountToSend: 100_000_001 }), 400, 'AMOUNT_OUT_OF_RANGE', 'amountToSend');
    expect((await p.api.post('/invitations', { inviterUma, amountToSend: 100_000_000 })).status).toBe(201);
  });

  it('needs a webhookEndpoint on a PRODUCTION platform: 400 INVITATIONS_NOT_CONFIGURED until one is set', async () => {
    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    const c = await customerOf(prod);
    const before = await prod.api.post('/invitations', { inviterUma: c.umaAddress });
    expectError(before, 400, 'INVITATIONS_NOT_CONFIGURED');
    expect(before.body.message).toContain('webhookEndpoint');
    expect((await prod.api.patch('/config', { webhookEndpoint: rec.url })).status).toBe(200);
    const after = await prod.api.post('/invitations', { inviterUma: c.umaAddress });
    expect(after.status, after.text).toBe(201);
    expect(after.body.status).toBe('PENDING');
  });
});

describe('reading an invitation', () => {
  it('finds it by its code in any case; an unknown code is 404 INVITATION_NOT_FOUND', async () => {
    const inv = await invite();
    expect((await p.api.get(`/invitations/${inv.code.toUpperCase()}`)).body).toEqual(inv);
    expectError(await p.api.get('/invitations/zzzzzzzzzzzz'), 404, 'INVITATION_NOT_FOUND');
    expectError(await p.api.get(`/invitations/${encodeURIComponent('../config')}`), 404, 'INVITATION_NOT_FOUND');
  });
});

describe('claiming', () => {
  it('moves PENDING to CLAIMED with inviteeUma and claimedAt, and sends a signed INVITATION.CLAIMED with the invitation', async () => {
    const inv = await invite({ firstName: 'Bob', amountToSend: 2500 });
    const res = await claim(inv.code, '$New.Friend@Other-VASP.example');
    expect(res.status, res.text).toBe(200);
    const claimed = res.body;
    expect(claimed).toEqual({
      ...inv,
      status: 'CLAIMED',
      inviteeUma: '$new.friend@other-vasp.example',
      claimedAt: expect.any(String),
    });
    expect(Date.parse(claimed.claimedAt)).toBeGreaterThanOrEqual(Date.parse(inv.createdAt));
    expect((await p.api.get(`/invitations/${inv.code}`)).body).toEqual(claimed);

    const got = await waitFor(() => claimedEvents(inv.code)[0]);
    expect(got.body.data).toEqual(claimed);
    expect(got.body.id).toMatch(/^Webhook:[0-9a-f-]{36}$/);
    expect(Date.parse(got.body.timestamp)).not.toBeNaN();
    expect(verifyWebhook(got.raw, got.headers['x-grid-signature'] as string, publicKey)).toBe(true);
    const tampered = Buffer.from(got.raw.toString('utf8').replace('"CLAIMED"', '"PENDING"'));
    expect(verifyWebhook(tampered, got.headers['x-grid-signature'] as string, publicKey)).toBe(false);
    expect((await storedEvents(p.id, inv.code)).map((e) => e.type)).toEqual(['INVITATION.CLAIMED']);
  });

  it('refuses a second claim (400 INVITATION_ALREADY_CLAIMED, naming the state) and sends no second event', async () => {
    const inv = await invite();
    expect((await claim(inv.code, '$first@vasp.example')).status).toBe(200);
    const again = expectError(await claim(inv.code, '$second@vasp.example'), 400, 'INVITATION_ALREADY_CLAIMED');
    expect(again.body.details).toEqual({ status: 'CLAIMED', inviteeUma: '$first@vasp.example' });
    expectError(await claim(inv.code, '$first@vasp.example'), 400, 'INVITATION_ALREADY_CLAIMED');
    expect((await p.api.get(`/invitations/${inv.code}`)).body.inviteeUma).toBe('$first@vasp.example');
    await waitFor(() => claimedEvents(inv.code)[0]);
    expect(await storedEvents(p.id, inv.code)).toHaveLength(1);
  });

  it('refuses the inviter’s own address, in any case', async () => {
    const inv = await invite();
    expectField(await claim(inv.code, inviterUma.toUpperCase()), 400, 'INVALID_INPUT', 'inviteeUma');
    expect((await p.api.get(`/invitations/${inv.code}`)).body.status).toBe('PENDING');
  });

  it('refuses a malformed inviteeUma (400 INVALID_UMA_ADDRESS), a missing or extra field (400 INVALID_INPUT)', async () => {
    const inv = await invite();
    for (const bad of ['', 'friend@vasp.example', '$friend', '$fr iend@vasp.example', '$friend@localhost']) {
      expectField(await claim(inv.code, bad), 400, 'INVALID_UMA_ADDRESS', 'inviteeUma');
    }
    expectField(await p.api.post(`/invitations/${inv.code}/claim`, {}), 400, 'INVALID_INPUT', 'inviteeUma');
    expectField(
      await p.api.post(`/invitations/${inv.code}/claim`, { inviteeUma: '$friend@vasp.example', note: 'hi' }),
      400,
      'INVALID_INPUT',
      'note',
    );
    expectError(await p.api.post(`/invitations/${inv.code}/claim`), 400, 'INVALID_INPUT');
    expect((await p.api.get(`/invitations/${inv.code}`)).body.status).toBe('PENDING');
    expectError(await claim('zzzzzzzzzzzz', '$friend@vasp.example'), 404, 'INVITATION_NOT_FOUND');
  });

  it('lets exactly one of many concurrent claims win, with one event', async () => {
    const inv = await invite();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => claim(inv.code, `$racer${i}@vasp.example`)));
    const won = results.filter((r) => r.status === 200);
    expect(won).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) expectError(r, 400, 'INVITATION_ALREADY_CLAIMED');
    expect((await p.api.get(`/invitations/${inv.code}`)).body.inviteeUma).toBe(won[0]!.body.inviteeUma);
    expect(await storedEvents(p.id, inv.code)).toHaveLength(1);
  });

  it('races a claim against a cancellation: one wins, the other names the state it left', async () => {
    for (let i = 0; i < 4; i++) {
      const inv = await invite();
      const [c, x] = await Promise.all([claim(inv.code, '$racer@vasp.example'), cancel(inv.code)]);
      expect([c.status, x.status].sort()).toEqual([200, 400]);
      const final = (await p.api.get(`/invitations/${inv.code}`)).body.status;
      if (c.status === 200) {
        expect(final).toBe('CLAIMED');
        expectError(x, 400, 'INVITATION_ALREADY_CLAIMED');
      } else {
        expect(final).toBe('CANCELLED');
        expectError(c, 400, 'INVITATION_CANCELLED');
      }
      expect(await storedEvents(p.id, inv.code)).toHaveLength(c.status === 200 ? 1 : 0);
    }
  });
});

describe('cancelling', () => {
  it('moves PENDING to CANCELLED (no body, an empty one too); the link can no longer be claimed; no event', async () => {
    const inv = await invite({ amountToSend: 700 });
    const res = await cancel(inv.code);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ ...inv, status: 'CANCELLED' });
    expect((await p.api.get(`/invitations/${inv.code}`)).body).toEqual(res.body);
    const refused = expectError(await claim(inv.code, '$late@vasp.example'), 400, 'INVITATION_CANCELLED');
    expect(refused.body.details).toEqual({ status: 'CANCELLED' });
    expectError(await cancel(inv.code), 400, 'INVITATION_CANCELLED');
    const other = await invite();
    expect((await p.api.post(`/invitations/${other.code}/cancel`, {})).status).toBe(200);
    expect(await storedEvents(p.id, inv.code)).toEqual([]);
  });

  it('refuses a claimed invitation (INVITATION_ALREADY_CLAIMED), a body with fields, and an unknown code', async () => {
    const inv = await invite();
    expectField(await p.api.post(`/invitations/${inv.code}/cancel`, { reason: 'x' }), 400, 'INVALID_INPUT', 'reason');
    expect((await claim(inv.code, '$friend@vasp.example')).status).toBe(200);
    expectError(await cancel(inv.code), 400, 'INVITATION_ALREADY_CLAIMED');
    expect((await p.api.get(`/invitations/${inv.code}`)).body.status).toBe('CLAIMED');
    expectError(await cancel('zzzzzzzzzzzz'), 404, 'INVITATION_NOT_FOUND');
  });
});

describe('expiry, on the platform’s clock', () => {
  it('turns PENDING into EXPIRED once expiresAt passes; claim and cancel are then 400 EXPIRED', async () => {
    const q = await srv.newPlatform();
    const c = await customerOf(q);
    const expiresAt = new Date(Date.now() + 60_000).toISOString();
    const inv = await invite({ expiresAt }, q, c.umaAddress);
    const late = await invite({ expiresAt: new Date(Date.now() + 3_600_000).toISOString() }, q, c.umaAddress);
    expect((await q.api.get(`/invitations/${inv.code}`)).body.status).toBe('PENDING');
    await advance(q, 61);
    const expired = (await q.api.get(`/invitations/${inv.code}`)).body;
    expect(expired).toEqual({ ...inv, status: 'EXPIRED' });
    const refused = expectError(await claim(inv.code, '$friend@vasp.example', q.api), 400, 'EXPIRED');
    expect(refused.body.details).toEqual({ status: 'EXPIRED', expiresAt });
    expectError(await cancel(inv.code, q.api), 400, 'EXPIRED');
    expect((await q.api.get(`/invitations/${inv.code}`)).body.status).toBe('EXPIRED');
    // One that has not expired yet is still claimable, and stays CLAIMED after its expiry passes.
    expect((await claim(late.code, '$friend@vasp.example', q.api)).body.status).toBe('CLAIMED');
    await advance(q, 3_600);
    expect((await q.api.get(`/invitations/${late.code}`)).body.status).toBe('CLAIMED');
    // A new invitation's expiry is judged on the advanced clock.
    expectField(
      await q.api.post('/invitations', { inviterUma: c.umaAddress, expiresAt: new Date(Date.now() + 60_000).toISOString() }),
      400,
      'INVALID_INPUT',
      'expiresAt',
    );
  });
});

describe('isolation and permissions', () => {
  it('another platform’s code is 404 INVITATION_NOT_FOUND on every operation, exactly like a code that exists nowhere', async () => {
    const inv = await invite();
    const other = await srv.newPlatform();
    const unknown = 'zzzzzzzzzzzz';
    const pairs: [Res, Res][] = [
      [await other.api.get(`/invitations/${inv.code}`), await other.api.get(`/invitations/${unknown}`)],
      [await claim(inv.code, '$thief@vasp.example', other.api), await claim(unknown, '$thief@vasp.example', other.api)],
      [await cancel(inv.code, other.api), await cancel(unknown, other.api)],
    ];
    for (const [theirs, none] of pairs) {
      expectError(theirs, 404, 'INVITATION_NOT_FOUND');
      expect(theirs.body).toEqual(none.body);
    }
    expect((await p.api.get(`/invitations/${inv.code}`)).body).toEqual(inv);
    expect(await storedEvents(p.id, inv.code)).toEqual([]);
  });

  it('reads need VIEW; create, claim and cancel need MANAGE (403 FORBIDDEN, nothing changed)', async () => {
    const token = async (permissions: string[]) => {
      const t = await p.api.post('/tokens', { name: uniqueId('invitations'), permissions });
      expect(t.status, t.text).toBe(201);
      return p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
    };
    const view = await token(['VIEW']);
    const transact = await token(['TRANSACT']);
    const manage = await token(['MANAGE']);
    const inv = await invite();
    for (const api of [view, transact]) {
      expectError(await api.post('/invitations', { inviterUma }), 403, 'FORBIDDEN');
      expectError(await claim(inv.code, '$friend@vasp.example', api), 403, 'FORBIDDEN');
      expectError(await cancel(inv.code, api), 403, 'FORBIDDEN');
    }
    expect((await view.get(`/invitations/${inv.code}`)).body).toEqual(inv);
    expectError(await manage.get(`/invitations/${inv.code}`), 403, 'FORBIDDEN');
    expectError(await transact.get(`/invitations/${inv.code}`), 403, 'FORBIDDEN');
    expect((await manage.post('/invitations', { inviterUma })).status).toBe(201);
    expect((await claim(inv.code, '$friend@vasp.example', manage)).status).toBe(200);
    expect((await cancel((await invite()).code, manage)).status).toBe(200);
  });

  it('needs credentials: 401 UNAUTHORIZED without or with wrong ones', async () => {
    const inv = await invite();
    const anon = new Client(srv.baseUrl);
    const wrong = anon.with({ basic: { id: p.creds.id, secret: 'sk_wrong' } });
    for (const api of [anon, wrong]) {
      expectError(await api.post('/invitations', { inviterUma }), 401, 'UNAUTHORIZED');
      expectError(await api.get(`/invitations/${inv.code}`), 401, 'UNAUTHORIZED');
      expectError(await claim(inv.code, '$friend@vasp.example', api), 401, 'UNAUTHORIZED');
      expectError(await cancel(inv.code, api), 401, 'UNAUTHORIZED');
    }
    expect((await p.api.get(`/invitations/${inv.code}`)).body.status).toBe('PENDING');
  });
});

describe('requests as the live TypeScript SDK sends them', () => {
  /** The SDK's request: Basic credentials, JSON only when there is a body, its own client headers (its `path` helper encodes the code). */
  async function sdkRequest(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Res> {
    const headers: Record<string, string> = {
      Accept: 'application/json',
      Authorization: `Basic ${Buffer.from(`${p.creds.id}:${p.creds.secret}`).toString('base64')}`,
      'User-Agent': 'LightsparkGrid/JS 0.0.0',
      'X-Stainless-Lang': 'js',
      'X-Stainless-Retry-Count': '0',
      'X-Stainless-Runtime': 'node',
    };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(`${srv.baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    const parsed = text ? JSON.parse(text) : undefined;
    // Checked against the live schema like every answer the test client gets.
    checkResponse(method, `${srv.baseUrl}${path}`, res.status, res.headers.get('content-type'), parsed);
    return { status: res.status, headers: res.headers, text, body: parsed };
  }

  it('create, retrieve, claim and cancel (cancel without a body) all succeed', async () => {
    const made = await sdkRequest('POST', '/invitations', { inviterUma, amountToSend: 12550, expiresAt: '2099-09-01T14:30:00Z' });
    expect(made.status, made.text).toBe(201);
    expect(made.body).toMatchObject({ status: 'PENDING', expiresAt: '2099-09-01T14:30:00.000Z', amountToSend: { amount: 12550 } });
    const got = await sdkRequest('GET', `/invitations/${encodeURIComponent(made.body.code)}`);
    expect(got.body).toEqual(made.body);
    const claimed = await sdkRequest('POST', `/invitations/${encodeURIComponent(made.body.code)}/claim`, {
      inviteeUma: '$invitee@uma.domain',
    });
    expect(claimed.status, claimed.text).toBe(200);
    expect(claimed.body).toMatchObject({ status: 'CLAIMED', inviteeUma: '$invitee@uma.domain' });

    const other = await sdkRequest('POST', '/invitations', { inviterUma });
    const cancelled = await sdkRequest('POST', `/invitations/${encodeURIComponent(other.body.code)}/cancel`);
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body.status).toBe('CANCELLED');
  });
});
