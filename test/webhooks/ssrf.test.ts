/**
 * Webhook targets of PRODUCTION platforms (defect: `webhookEndpoint` was a read-SSRF): loopback,
 * private, link-local and non-routable addresses are refused at PATCH /config and at every delivery,
 * on the address actually connected to (a name that resolves to one later — DNS rebinding — is
 * caught then); SANDBOX platforms keep delivering to localhost and seeing the answer. (Response
 * bodies of PRODUCTION platforms and CORRIDOR_WEBHOOK_ALLOW_PRIVATE=true: ssrf-allow-private.test.ts,
 * a server of its own — on PostgreSQL two servers of one file would share a schema and serve each
 * other's platforms.)
 */
import type { LookupAddress } from 'node:dns';
import { promises as dns } from 'node:dns';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updatePlatform } from '../../src/modules/platforms/platforms.repo.ts';
import { enqueueEvent } from '../../src/outbox/outbox.ts';
import type { PlatformRow } from '../../src/store/schema.ts';
import { WebhookDeliverer } from '../../src/webhook-delivery/deliverer.ts';
import {
  addressRefusal,
  guardedLookup,
  literalRefusal,
  TargetRefusedError,
  type ResolveAll,
} from '../../src/webhook-delivery/target-guard.ts';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { startReceiver, waitFor, type Receiver } from '../helpers/receiver.ts';

let srv: TestServer;
const receivers: Receiver[] = [];
const deliverers: WebhookDeliverer[] = [];

beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => {
  for (const d of deliverers) await d.stop();
  await srv.close();
  for (const r of receivers) await r.close();
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

const port = (r: Receiver) => new URL(r.url).port;

/** Every form of the loopback receiver `r` that a PRODUCTION platform must not reach (0.0.0.0 reaches it on Linux). */
function loopbackForms(r: Receiver): string[] {
  const p = port(r);
  return [
    `http://127.0.0.1:${p}/hooks`,
    `http://2130706433:${p}/hooks`,
    `http://0x7f.1:${p}/hooks`,
    `http://017700000001:${p}/hooks`,
    `http://127.1:${p}/hooks`,
    `http://127.0.0.1.:${p}/hooks`,
    `http://0:${p}/hooks`,
    `http://[::1]:${p}/hooks`,
    `http://[::ffff:127.0.0.1]:${p}/hooks`,
    `http://[::ffff:7f00:1]:${p}/hooks`,
    `http://localhost:${p}/hooks`,
    `http://LOCALHOST.:${p}/hooks`,
    `http://hooks.corridor.localhost:${p}/hooks`,
  ];
}

async function row(platformId: string): Promise<PlatformRow> {
  return srv.app.ctx.db.selectFrom('platforms').selectAll().where('id', '=', platformId).executeTakeFirstOrThrow();
}

/** POST /sandbox/webhooks/test through `d`: the TEST event claimed in a transaction, then sent. */
async function sendTest(d: WebhookDeliverer, platform: PlatformRow) {
  const ctx = srv.app.ctx;
  return d.deliver(await ctx.db.transaction().execute((trx) => d.claimTest(trx, platform, ctx.deps.ids.next('Webhook'))));
}

/** Stores `url` as the platform's endpoint without PATCH's check (an endpoint set before the rule existed). */
async function storeEndpoint(s: TestServer, platformId: string, url: string): Promise<void> {
  const p = await s.app.ctx.db.selectFrom('platforms').select('config').where('id', '=', platformId).executeTakeFirstOrThrow();
  await updatePlatform(s.app.ctx.db, platformId, { config: JSON.stringify({ ...JSON.parse(p.config), webhookEndpoint: url }) });
}

async function attemptsOf(s: TestServer, eventId: string) {
  return s.app.ctx.db.selectFrom('webhook_attempts').selectAll().where('event_id', '=', eventId).orderBy('attempt').execute();
}

/** A PRODUCTION platform with one FAILED TEST event (its endpoint, a name no DNS here knows, never answered). */
async function productionWithTestEvent(s: TestServer): Promise<{ p: PlatformHandle; eventId: string }> {
  const p = await s.newPlatform({ environment: 'PRODUCTION' });
  expect((await p.api.patch('/config', { webhookEndpoint: 'https://hooks.corridor-no-such-host.invalid/x' })).status).toBe(200);
  const ev = await waitFor(async () => {
    const e = await s.app.ctx.db
      .selectFrom('outbox_events')
      .selectAll()
      .where('platform_id', '=', p.id)
      .where('type', '=', 'TEST')
      .executeTakeFirst();
    return e?.status === 'FAILED' ? e : undefined;
  });
  return { p, eventId: ev.id };
}

/** A deliverer on the test server's store with its own DNS (`resolveAll`); its loop is not started. */
function delivererWith(resolveAll: ResolveAll, allowPrivate = false): WebhookDeliverer {
  const ctx = srv.app.ctx;
  const d = new WebhookDeliverer({
    db: ctx.db,
    kind: ctx.store.kind,
    clock: ctx.deps.clock,
    ids: ctx.deps.ids,
    secrets: ctx.secrets,
    resolveAll,
    allowPrivate,
  });
  deliverers.push(d);
  return d;
}

describe('the address rule', () => {
  it('refuses loopback, private, link-local and non-routable IPv4 and IPv6 addresses, embedded IPv4 forms included', () => {
    const refused: [string, RegExp][] = [
      ['127.0.0.1', /loopback/],
      ['127.255.255.254', /loopback/],
      ['10.0.0.5', /private/],
      ['172.16.0.1', /private/],
      ['172.31.255.255', /private/],
      ['192.168.1.1', /private/],
      ['100.64.0.1', /private/],
      ['100.127.255.255', /private/],
      ['169.254.169.254', /link-local/],
      ['0.0.0.0', /non-routable/],
      ['0.1.2.3', /non-routable/],
      ['192.0.0.8', /non-routable/],
      ['192.0.2.1', /non-routable/],
      ['198.18.0.1', /non-routable/],
      ['198.19.255.255', /non-routable/],
      ['198.51.100.7', /non-routable/],
      ['203.0.113.9', /non-routable/],
      ['224.0.0.1', /multicast/],
      ['239.255.255.250', /multicast/],
      ['240.0.0.1', /non-routable/],
      ['255.255.255.255', /non-routable/],
      ['::1', /loopback/],
      ['::', /non-routable/],
      ['::ffff:127.0.0.1', /loopback.*127\.0\.0\.1/],
      ['::ffff:7f00:1', /loopback/],
      ['::ffff:10.1.2.3', /private/],
      ['::ffff:169.254.169.254', /link-local/],
      ['::127.0.0.1', /non-routable/],
      ['64:ff9b::7f00:1', /loopback/],
      ['64:ff9b::a00:5', /private/],
      ['2002:7f00:1::1', /loopback/],
      ['2002:c0a8:101::', /private/],
      ['fc00::1', /private/],
      ['fd12:3456:789a::1', /private/],
      ['fe80::1', /link-local/],
      ['fe80::1%eth0', /link-local/],
      ['febf:ffff::1', /link-local/],
      ['fec0::1', /private/],
      ['ff02::1', /multicast/],
      ['2001:db8::1', /non-routable/],
      ['2001::1', /non-routable/],
      ['100::1', /non-routable/],
    ];
    for (const [address, why] of refused) expect([address, addressRefusal(address)]).toEqual([address, expect.stringMatching(why)]);
    const allowed = [
      '8.8.8.8',
      '1.1.1.1',
      '93.184.216.34',
      '11.0.0.1',
      '172.15.255.255',
      '172.32.0.1',
      '192.167.255.255',
      '192.169.0.1',
      '100.63.255.255',
      '100.128.0.1',
      '169.253.0.1',
      '198.17.255.255',
      '198.20.0.1',
      '223.255.255.255',
      '2606:4700:4700::1111',
      '2001:4860:4860::8888',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
      '2002:808:808::1',
    ];
    for (const address of allowed) expect([address, addressRefusal(address)]).toEqual([address, undefined]);
    expect(addressRefusal('example.com')).toBe('not an IP address');
  });

  it('reads the host the way a connection will: the WHATWG forms of 127.0.0.1, IPv6 literals, localhost names', () => {
    const r = { url: 'http://127.0.0.1:9/hooks' } as Receiver;
    for (const url of loopbackForms(r))
      expect([url, literalRefusal(new URL(url))]).toEqual([
        url,
        expect.stringMatching(/^refused: .* is a (loopback|non-routable) (address|name)/),
      ]);
    expect(literalRefusal(new URL('http://10.0.0.5/'))).toBe('refused: 10.0.0.5 is a private address');
    expect(literalRefusal(new URL('http://[fd00::1]/'))).toBe('refused: fd00::1 is a private address');
    expect(literalRefusal(new URL('http://169.254.169.254/latest/meta-data/'))).toBe('refused: 169.254.169.254 is a link-local address');
    expect(literalRefusal(new URL('http://[fe80::1]:8080/'))).toBe('refused: fe80::1 is a link-local address');
    // Names are left to DNS (checked on the resolved address); public literals pass.
    expect(literalRefusal(new URL('https://hooks.example.com/x'))).toBeUndefined();
    expect(literalRefusal(new URL('https://localhost.example.com/x'))).toBeUndefined();
    expect(literalRefusal(new URL('http://93.184.216.34/'))).toBeUndefined();
  });

  it('the connection lookup hands over only routable addresses; localhost is refused without asking DNS', async () => {
    const asked: string[] = [];
    const answers: Record<string, LookupAddress[]> = {
      'private.test': [{ address: '10.0.0.5', family: 4 }],
      'mixed.test': [
        { address: '::1', family: 6 },
        { address: '93.184.216.34', family: 4 },
        { address: '192.168.0.1', family: 4 },
      ],
    };
    const lookup = guardedLookup(async (h) => {
      asked.push(h);
      return answers[h] ?? [];
    });
    const call = (host: string, all: boolean) =>
      new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) =>
        lookup(host, { all }, (err, address, family) => resolve({ err, address, family })),
      );
    const priv = await call('private.test', false);
    expect(priv.err).toBeInstanceOf(TargetRefusedError);
    expect(priv.err?.message).toBe('refused: 10.0.0.5 (private.test) is a private address');
    expect(await call('mixed.test', true)).toMatchObject({ err: null, address: [{ address: '93.184.216.34', family: 4 }] });
    expect(await call('mixed.test', false)).toMatchObject({ err: null, address: '93.184.216.34', family: 4 });
    const local = await call('api.localhost', false);
    expect(local.err?.message).toBe('refused: api.localhost is a loopback name');
    expect(asked).toEqual(['private.test', 'mixed.test', 'mixed.test']);
  });
});

describe('PATCH /config webhookEndpoint', () => {
  it('a PRODUCTION platform: 400 on the field for every loopback form and private, link-local, non-routable targets', async () => {
    const p = await srv.newPlatform({ environment: 'PRODUCTION' });
    const r = await receiver();
    const targets = [
      ...loopbackForms(r),
      'http://10.0.0.5/hooks',
      'http://172.16.5.4/hooks',
      'http://192.168.1.10:8080/hooks',
      'http://100.64.0.1/hooks',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00::1]/hooks',
      'http://[fe80::1]/hooks',
      'http://[::]/hooks',
      'http://0.0.0.0/hooks',
      'http://224.0.0.1/hooks',
      'http://255.255.255.255/hooks',
      'http://198.18.0.1/hooks',
    ];
    for (const url of targets) {
      const res = await p.api.patch('/config', { webhookEndpoint: url });
      expectError(res, 400, 'INVALID_INPUT');
      expect([url, res.body.details.errors]).toEqual([
        url,
        [
          {
            field: 'webhookEndpoint',
            message: expect.stringMatching(/is a (loopback|private|link-local|multicast|non-routable) (address|name)/),
          },
        ],
      ]);
    }
    expect((await p.api.get('/config')).body.webhookEndpoint).toBeUndefined();
    expect(await srv.app.ctx.db.selectFrom('outbox_events').select('id').where('platform_id', '=', p.id).execute()).toEqual([]);
    expect(r.received).toHaveLength(0);
  });

  it('a name is checked on what it resolves to now; one that does not resolve is accepted (delivery checks again)', async () => {
    const p = await srv.newPlatform({ environment: 'PRODUCTION' });
    // This machine's own name: whatever it resolves to here decides, as the rule says.
    const host = os.hostname();
    const addresses = await dns.lookup(host, { all: true }).catch(() => []);
    const routable = addresses.length === 0 || addresses.some((a) => addressRefusal(a.address) === undefined);
    const res = await p.api.patch('/config', { webhookEndpoint: `http://${host}:8080/hooks` });
    if (routable) expect(res.status).toBe(200);
    else
      expect(expectError(res, 400, 'INVALID_INPUT').body.details.errors[0]).toMatchObject({
        field: 'webhookEndpoint',
        message: expect.stringContaining(`(${host.toLowerCase()})`),
      });
    // No DNS knows this name: accepted now; each delivery attempt resolves it again.
    const ok = await p.api.patch('/config', { webhookEndpoint: 'https://hooks.corridor-no-such-host.invalid/x' });
    expect(ok.status).toBe(200);
    expect(ok.body.webhookEndpoint).toBe('https://hooks.corridor-no-such-host.invalid/x');
  });

  it('a deliverer decides with its own DNS: a name resolving only to private addresses is refused, one with a public address is not', async () => {
    const answers: Record<string, string[]> = { 'internal.test': ['10.0.0.5', 'fd00::5'], 'public.test': ['93.184.216.34'] };
    const d = delivererWith(async (h) => (answers[h] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
    const prod = { id: 'Platform:x', environment: 'PRODUCTION' };
    expect(await d.endpointRefusal(prod, 'https://internal.test/hooks')).toBe('refused: 10.0.0.5 (internal.test) is a private address');
    expect(await d.endpointRefusal(prod, 'https://public.test/hooks')).toBeUndefined();
    expect(await d.endpointRefusal({ id: 'Platform:y', environment: 'SANDBOX' }, 'https://internal.test/hooks')).toBeUndefined();
  });

  it('a SANDBOX platform may use localhost and private targets (its receivers run on 127.0.0.1)', async () => {
    const p = await srv.newPlatform();
    for (const url of ['http://127.0.0.1:1/hooks', 'http://localhost:1/hooks', 'http://10.0.0.5/hooks', 'http://[::1]:1/hooks']) {
      expect((await p.api.patch('/config', { webhookEndpoint: url })).status).toBe(200);
    }
  });
});

describe('delivery to a refused target', () => {
  it('a stored loopback endpoint in any form: each replay is a failed attempt `refused: …`, and nothing reaches the receiver', async () => {
    const r = await receiver();
    const { p, eventId } = await productionWithTestEvent(srv);
    for (const url of loopbackForms(r)) {
      await storeEndpoint(srv, p.id, url);
      const res = await p.api.post(`/webhooks/deliveries/${eventId}/replay`);
      expect(res.status).toBe(200);
      const last = res.body.attempts.at(-1);
      expect([url, last]).toEqual([
        url,
        {
          attempt: expect.any(Number),
          at: expect.any(String),
          url,
          latencyMs: expect.any(Number),
          error: expect.stringMatching(/^refused: .* is a (loopback|non-routable) (address|name)/),
        },
      ]);
      expect(res.body.status).toBe('FAILED');
    }
    expect(r.received).toHaveLength(0);
  });

  it('the background loop: a refused attempt is retried like any failure (PENDING, next attempt in 30 s)', async () => {
    const r = await receiver();
    // The event waits (no endpoint yet); then the only endpoint the platform ever has is stored.
    const p = await srv.newPlatform({ environment: 'PRODUCTION' });
    const id = srv.app.ctx.deps.ids.next('Webhook');
    await enqueueEvent(srv.app.ctx.db, {
      id,
      platformId: p.id,
      type: 'CUSTOMER.KYC_APPROVED',
      resourceId: 'Customer:ssrf',
      data: {},
      at: new Date().toISOString(),
    });
    await storeEndpoint(srv, p.id, `http://[::ffff:127.0.0.1]:${port(r)}/hooks`);
    const ev = await waitFor(async () => {
      const e = await srv.app.ctx.db.selectFrom('outbox_events').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      return e.attempts === 1 && e.status === 'PENDING' ? e : undefined;
    });
    expect(Number(ev.next_attempt_ms) - Date.now()).toBeGreaterThan(20_000);
    const [a] = await attemptsOf(srv, id);
    expect(a).toMatchObject({
      response_status: null,
      response_body: null,
      error: 'refused: ::ffff:7f00:1 is a loopback address (127.0.0.1)',
    });
    const detail = await p.api.get(`/webhooks/deliveries/${id}`);
    expect(detail.body).toMatchObject({ status: 'PENDING', lastError: a!.error, nextAttemptAt: expect.any(String) });
    expect(r.received).toHaveLength(0);
  });

  it('DNS rebinding: the address each connection is made to is the one checked', async () => {
    const r = await receiver();
    const { p } = await productionWithTestEvent(srv);
    // The name resolves to a public address when PATCH asks, and to loopback when the attempt connects.
    let answer = '93.184.216.34';
    const resolveAll: ResolveAll = async (h) => (h === 'rebind.corridor.test' ? [{ address: answer, family: 4 }] : []);
    const url = `http://rebind.corridor.test:${port(r)}/hooks`;
    const guarded = delivererWith(resolveAll);
    expect(await guarded.endpointRefusal(await row(p.id), url)).toBeUndefined();
    await storeEndpoint(srv, p.id, url);
    answer = '127.0.0.1';
    const refused = await sendTest(guarded, await row(p.id));
    expect(refused).toMatchObject({ status: null, body: null, error: 'refused: 127.0.0.1 (rebind.corridor.test) is a loopback address' });
    expect(r.received).toHaveLength(0);
    // The same name and resolver with the rule lifted: the request goes to the resolved address (the
    // name is unknown to real DNS), so the refusal above was decided on the address connected to.
    const allowed = delivererWith(resolveAll, true);
    const sent = await sendTest(allowed, await row(p.id));
    expect(sent).toMatchObject({ status: 200, error: null });
    expect(r.received).toHaveLength(1);
    expect(r.received[0]!.headers.host).toBe(`rebind.corridor.test:${port(r)}`);
  });
});

describe('response bodies', () => {
  it('a SANDBOX platform keeps seeing its endpoint’s answer (bodies and redirect targets)', async () => {
    const r = await receiver();
    const p = await srv.newPlatform();
    expect((await p.api.patch('/config', { webhookEndpoint: r.url })).status).toBe(200);
    r.respond = () => ({ status: 200, body: '{"received":true}' });
    const res = await p.api.post('/sandbox/webhooks/test');
    expect(res.body).toEqual({ url: r.url, response_status: 200, response_body: '{"received":true}' });
    const id = (await p.api.get('/webhooks/deliveries', { query: { type: 'TEST', limit: 1 } })).body.data[0].id;
    expect((await p.api.get(`/webhooks/deliveries/${id}`)).body.attempts.at(-1)).toMatchObject({
      responseStatus: 200,
      responseBody: '{"received":true}',
    });
    r.respond = () => ({ status: 302, headers: { location: 'https://elsewhere.example/' } });
    const moved = await p.api.post(`/webhooks/deliveries/${id}/replay`);
    expect(moved.body.attempts.at(-1)).toMatchObject({ responseStatus: 302, error: 'redirect to https://elsewhere.example/ not followed' });
  });
});
