/**
 * Agent management over HTTP: create (with its first device code), read, list with filters and
 * pagination, rename/pause, policy updates, delete; the install flow (status → redeem → bearer
 * token), device-code rules (once, expiry, regeneration, 409 when connected); and AgentAuth
 * (wrong token, platform token on /agents/me, agent token on platform routes, deleted agent).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { advance, createAgent, customer, installAgent, policy, type Wire } from './util.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => srv.close());

const fields = (res: { body: Wire }) => (res.body.details?.errors ?? []).map((e: { field: string }) => e.field);

describe('POST /agents', () => {
  it('creates an agent with its policy, zero usage and a 24-hour device code', async () => {
    const p = await srv.newPlatform();
    const c = await customer(p, 0);
    const pol = policy({
      spendingLimits: { currency: 'USD', perTransactionLimit: 50_000, dailyLimit: 500_000, dailyTransactionLimit: 10, monthlyLimit: null },
      accountRestrictions: {
        allowedAccountIds: [c.account],
        accountRules: [{ accountId: c.account, executionMode: 'APPROVAL_REQUIRED', perTransactionLimit: null }],
      },
      approvalThresholds: { currency: 'USD', amount: 100_000 },
    });
    const res = await p.api.post('/agents', { name: 'Payroll Automation Agent', customerId: c.customerId, policy: pol });
    expect(res.status, res.text).toBe(201);
    const { agent, deviceCode } = res.body;
    expect(agent).toMatchObject({
      name: 'Payroll Automation Agent',
      customerId: c.customerId,
      isPaused: false,
      isConnected: false,
      policy: pol,
    });
    expect(agent.id).toMatch(/^Agent:[0-9a-f-]{36}$/);
    expect(agent.usage).toMatchObject({ dailyTransactionCount: 0, dailySpend: 0, monthlySpend: 0 });
    const day = new Date(Date.parse(agent.createdAt));
    expect(agent.usage.dailyResetDate).toBe(
      new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate() + 1)).toISOString().slice(0, 10),
    );
    expect(agent.usage.monthlyResetMonth).toBe(
      new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth() + 1, 1)).toISOString().slice(0, 7),
    );
    expect(deviceCode).toMatchObject({ agentId: agent.id, redeemed: false });
    expect(deviceCode.code).toMatch(/^AGENT-[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    expect(Date.parse(deviceCode.expiresAt) - Date.parse(agent.createdAt)).toBe(24 * 3600_000);
    expect((await p.api.get(`/agents/${agent.id}`)).body).toEqual(agent);
    // The code is stored only as a hash.
    const stored = await srv.app.ctx.db.selectFrom('agent_device_codes').selectAll().where('agent_id', '=', agent.id).execute();
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored)).not.toContain(deviceCode.code);
  });

  it('rejects bad input with the field named', async () => {
    const p = await srv.newPlatform();
    const c = await customer(p, 0);
    const other = await customer(p, 0);
    const post = (body: Record<string, unknown>) => p.api.post('/agents', body);
    const ok = { name: 'A', customerId: c.customerId, policy: policy() };
    expect(fields(expectError(await post({ name: 'A', customerId: c.customerId }), 400, 'INVALID_INPUT'))).toContain('policy');
    expect(fields(expectError(await post({ ...ok, color: 'red' }), 400, 'INVALID_INPUT'))).toContain('color');
    expect(fields(expectError(await post({ ...ok, policy: { ...policy(), extra: 1 } }), 400, 'INVALID_INPUT'))).toContain('policy.extra');
    expect(fields(expectError(await post({ ...ok, policy: policy({ permissions: ['FLY'] }) }), 400, 'INVALID_INPUT'))[0]).toMatch(
      /^policy\.permissions/,
    );
    expect(
      fields(expectError(await post({ ...ok, policy: policy({ defaultExecutionMode: 'SOMETIMES' }) }), 400, 'INVALID_INPUT')),
    ).toContain('policy.defaultExecutionMode');
    expect(
      fields(expectError(await post({ ...ok, policy: policy({ spendingLimits: { currency: 'USD' } }) }), 400, 'INVALID_INPUT')),
    ).toContain('policy.spendingLimits.perTransactionLimit');
    expect(
      fields(
        expectError(
          await post({ ...ok, policy: policy({ spendingLimits: { currency: 'USD', perTransactionLimit: -1 } }) }),
          400,
          'INVALID_INPUT',
        ),
      ),
    ).toContain('policy.spendingLimits.perTransactionLimit');
    expectError(
      await post({ ...ok, policy: policy({ spendingLimits: { currency: 'XYZ', perTransactionLimit: 1 } }) }),
      400,
      'INVALID_CURRENCY',
    );
    expect(fields(expectError(await post({ ...ok, policy: policy({ approvalThresholds: { amount: 5 } }) }), 400, 'INVALID_INPUT'))).toEqual(
      ['policy.approvalThresholds.currency'],
    );
    expect(
      fields(
        expectError(
          await post({ ...ok, policy: policy({ accountRestrictions: { allowedAccountIds: [other.account] } }) }),
          400,
          'INVALID_INPUT',
        ),
      ),
    ).toEqual(['policy.accountRestrictions.allowedAccountIds.0']);
    expect(
      fields(
        expectError(
          await post({ ...ok, policy: policy({ accountRestrictions: { accountRules: [{ accountId: 'InternalAccount:nope' }] } }) }),
          400,
          'INVALID_INPUT',
        ),
      ),
    ).toEqual(['policy.accountRestrictions.accountRules.0.accountId']);
    expectError(await post({ ...ok, customerId: 'Customer:019542f5-b3e7-7d02-8000-000000000001' }), 404, 'USER_NOT_FOUND');
    expectError(await srv.anon.post('/agents', ok), 401, 'UNAUTHORIZED');
    // Another platform's customer is unknown here.
    const q = await srv.newPlatform();
    expectError(await q.api.post('/agents', ok), 404, 'USER_NOT_FOUND');
    expect((await p.api.get('/agents')).body.data).toEqual([]);
  });

  it('replays a create with the same Idempotency-Key (one agent, one code)', async () => {
    const p = await srv.newPlatform();
    const c = await customer(p, 0);
    const body = { name: 'Once', customerId: c.customerId, policy: policy() };
    const a = await p.api.post('/agents', body, { headers: { 'Idempotency-Key': 'agent-create-1' } });
    const b = await p.api.post('/agents', body, { headers: { 'Idempotency-Key': 'agent-create-1' } });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body).toEqual(a.body);
    expect(b.headers.get('idempotency-hit')).toBe('true');
    expect((await p.api.get('/agents')).body.totalCount).toBe(1);
    expectError(
      await p.api.post('/agents', { ...body, name: 'Other' }, { headers: { 'Idempotency-Key': 'agent-create-1' } }),
      409,
      'CONFLICT',
    );
  });
});

describe('GET /agents and /agents/{id}', () => {
  it('filters, paginates, and hides other platforms', async () => {
    const p = await srv.newPlatform();
    const c1 = await customer(p, 0);
    const c2 = await customer(p, 0);
    const a1 = (await createAgent(p, c1.customerId, policy(), 'one')).agent;
    const a2 = (await createAgent(p, c1.customerId, policy(), 'two')).agent;
    const a3 = await installAgent(srv, p, c2.customerId);
    expect((await p.api.patch(`/agents/${a2.id}`, { isPaused: true })).status).toBe(200);

    const ids = async (query: Record<string, string | number | boolean>) => {
      const res = await p.api.get('/agents', { query });
      expect(res.status, res.text).toBe(200);
      return res.body.data.map((a: Wire) => a.id);
    };
    expect(await ids({})).toEqual([a3.id, a2.id, a1.id]);
    expect(await ids({ customerId: c1.customerId })).toEqual([a2.id, a1.id]);
    expect(await ids({ isPaused: true })).toEqual([a2.id]);
    expect(await ids({ isPaused: false })).toEqual([a3.id, a1.id]);
    expect(await ids({ isConnected: true })).toEqual([a3.id]);
    expect(await ids({ isConnected: false, customerId: c1.customerId })).toEqual([a2.id, a1.id]);
    expect(await ids({ createdAfter: a2.createdAt })).toEqual([a3.id, a2.id]);
    expect(await ids({ createdBefore: a1.createdAt })).toEqual([a1.id]);
    expect(await ids({ updatedAfter: '2999-01-01T00:00:00Z' })).toEqual([]);
    expect(await ids({ updatedBefore: '2999-01-01T00:00:00Z' })).toHaveLength(3);

    const first = await p.api.get('/agents', { query: { limit: 2 } });
    expect(first.body).toMatchObject({ hasMore: true, totalCount: 3 });
    expect(first.body.data.map((a: Wire) => a.id)).toEqual([a3.id, a2.id]);
    const second = await p.api.get('/agents', { query: { limit: 2, cursor: first.body.nextCursor } });
    expect(second.body.data.map((a: Wire) => a.id)).toEqual([a1.id]);
    expect(second.body.hasMore).toBe(false);
    expect(second.body.nextCursor).toBeUndefined();

    expectError(await p.api.get('/agents', { query: { cursor: 'garbage' } }), 400, 'INVALID_INPUT');
    expectError(await p.api.get('/agents', { query: { isPaused: 'maybe' } }), 400, 'INVALID_INPUT');
    expectError(await p.api.get('/agents', { query: { limit: 0 } }), 400, 'INVALID_INPUT');
    expectError(await p.api.get('/agents', { query: { createdAfter: 'yesterday' } }), 400, 'INVALID_INPUT');
    expectError(await p.api.get('/agents', { query: { name: 'x' } }), 400, 'INVALID_INPUT');

    const q = await srv.newPlatform();
    expect((await q.api.get('/agents')).body.data).toEqual([]);
    expectError(await q.api.get(`/agents/${a1.id}`), 404, 'REFERENCE_NOT_FOUND');
    expectError(await q.api.patch(`/agents/${a1.id}`, { name: 'mine' }), 404, 'REFERENCE_NOT_FOUND');
    expectError(await q.api.patch(`/agents/${a1.id}/policy`, { defaultExecutionMode: 'AUTO' }), 404, 'REFERENCE_NOT_FOUND');
    expectError(await q.api.delete(`/agents/${a1.id}`), 404, 'REFERENCE_NOT_FOUND');
    expectError(await q.api.post(`/agents/${a1.id}/device-codes`), 404, 'REFERENCE_NOT_FOUND');
    expectError(await p.api.get('/agents/Agent:019542f5-b3e7-7d02-8000-000000000001'), 404, 'REFERENCE_NOT_FOUND');
    expectError(await srv.anon.get(`/agents/${a1.id}`), 401, 'UNAUTHORIZED');
  });
});

describe('PATCH /agents/{id} and /agents/{id}/policy, DELETE', () => {
  it('renames and pauses; rejects empty or unknown fields', async () => {
    const p = await srv.newPlatform();
    const c = await customer(p, 0);
    const { agent } = await createAgent(p, c.customerId);
    const res = await p.api.patch(`/agents/${agent.id}`, { name: 'Renamed', isPaused: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: agent.id, name: 'Renamed', isPaused: true });
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(agent.updatedAt));
    expect((await p.api.patch(`/agents/${agent.id}`, { isPaused: false })).body).toMatchObject({ name: 'Renamed', isPaused: false });
    expectError(await p.api.patch(`/agents/${agent.id}`, {}), 400, 'INVALID_INPUT');
    expect(fields(expectError(await p.api.patch(`/agents/${agent.id}`, { customerId: c.customerId }), 400, 'INVALID_INPUT'))).toContain(
      'customerId',
    );
    expect(fields(expectError(await p.api.patch(`/agents/${agent.id}`, { name: '' }), 400, 'INVALID_INPUT'))).toContain('name');
  });

  it('merges a policy update: permissions replace, limits merge, null clears, a new currency recasts', async () => {
    const p = await srv.newPlatform();
    const c = await customer(p, 0);
    const { agent } = await createAgent(
      p,
      c.customerId,
      policy({
        spendingLimits: {
          currency: 'USD',
          perTransactionLimit: 50_000,
          dailyLimit: 500_000,
          dailyTransactionLimit: 10,
          monthlyLimit: 5_000_000,
        },
        approvalThresholds: { currency: 'USD', amount: 100_000 },
      }),
    );
    const r1 = await p.api.patch(`/agents/${agent.id}/policy`, {
      permissions: ['VIEW_TRANSACTIONS'],
      spendingLimits: { dailyLimit: null, perTransactionLimit: 60_000 },
    });
    expect(r1.status, r1.text).toBe(200);
    expect(r1.body.policy).toEqual({
      permissions: ['VIEW_TRANSACTIONS'],
      defaultExecutionMode: 'AUTO',
      spendingLimits: {
        currency: 'USD',
        perTransactionLimit: 60_000,
        dailyLimit: null,
        dailyTransactionLimit: 10,
        monthlyLimit: 5_000_000,
      },
      approvalThresholds: { currency: 'USD', amount: 100_000 },
    });
    const r2 = await p.api.patch(`/agents/${agent.id}/policy`, {
      approvalThresholds: { amount: null },
      accountRestrictions: { allowedAccountIds: [c.account] },
      defaultExecutionMode: 'APPROVAL_REQUIRED',
    });
    expect(r2.body.policy).toMatchObject({
      defaultExecutionMode: 'APPROVAL_REQUIRED',
      approvalThresholds: { currency: 'USD', amount: null },
      accountRestrictions: { allowedAccountIds: [c.account] },
    });
    const r3 = await p.api.patch(`/agents/${agent.id}/policy`, { accountRestrictions: { allowedAccountIds: null } });
    expect(r3.body.policy.accountRestrictions).toEqual({ allowedAccountIds: null });
    // USD → USDC is pegged: 1 cent is 10,000 micro-USDC, so the recast is exact.
    const r4 = await p.api.patch(`/agents/${agent.id}/policy`, { spendingLimits: { currency: 'USDC', monthlyLimit: 7 } });
    expect(r4.body.policy.spendingLimits).toEqual({
      currency: 'USDC',
      perTransactionLimit: 600_000_000,
      dailyLimit: null,
      dailyTransactionLimit: 10,
      monthlyLimit: 7,
    });
    expect((await p.api.get(`/agents/${agent.id}`)).body.policy).toEqual(r4.body.policy);

    expectError(await p.api.patch(`/agents/${agent.id}/policy`, {}), 400, 'INVALID_INPUT');
    expect(
      fields(
        expectError(
          await p.api.patch(`/agents/${agent.id}/policy`, { spendingLimits: { perTransactionLimit: null } }),
          400,
          'INVALID_INPUT',
        ),
      ),
    ).toContain('spendingLimits.perTransactionLimit');
    expect(
      fields(
        expectError(await p.api.patch(`/agents/${agent.id}/policy`, { approvalThresholds: { currency: null } }), 400, 'INVALID_INPUT'),
      ),
    ).toContain('approvalThresholds.currency');
    expectError(await p.api.patch(`/agents/${agent.id}/policy`, { spendingLimits: { currency: 'ZZZ' } }), 400, 'INVALID_CURRENCY');
    const dup = { accountRestrictions: { accountRules: [{ accountId: c.account }, { accountId: c.account, executionMode: 'AUTO' }] } };
    expect(fields(expectError(await p.api.patch(`/agents/${agent.id}/policy`, dup), 400, 'INVALID_INPUT'))).toEqual([
      'accountRestrictions.accountRules.1.accountId',
    ]);
    // Nothing of the refused updates stuck.
    expect((await p.api.get(`/agents/${agent.id}`)).body.policy).toEqual(r4.body.policy);
  });

  it('deletes an agent: 204, then 404 everywhere and its token stops working at once', async () => {
    const p = await srv.newPlatform();
    const c = await customer(p, 0);
    const a = await installAgent(srv, p, c.customerId);
    expect((await a.api.get('/agents/me')).status).toBe(200);
    const res = await p.api.delete(`/agents/${a.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectError(await a.api.get('/agents/me'), 401, 'UNAUTHORIZED');
    expectError(await p.api.get(`/agents/${a.id}`), 404, 'REFERENCE_NOT_FOUND');
    expectError(await p.api.delete(`/agents/${a.id}`), 404, 'REFERENCE_NOT_FOUND');
    expect((await p.api.get('/agents')).body.data).toEqual([]);
    expect(await srv.app.ctx.db.selectFrom('agent_tokens').selectAll().where('agent_id', '=', a.id).execute()).toEqual([]);
  });
});

describe('install: device codes and redemption', () => {
  it('create → status → redeem → GET /agents/me; the token is shown once and stored hashed', async () => {
    const p = await srv.newPlatform();
    const c = await customer(p, 0);
    const { agent, deviceCode } = await createAgent(p, c.customerId, policy(), 'Installer');
    const status = await p.api.get(`/agents/device-codes/${deviceCode.code}/status`);
    expect(status.status).toBe(200);
    expect(status.body).toEqual({ code: deviceCode.code, redeemed: false });
    // Typed by a person: case does not matter.
    expect((await p.api.get(`/agents/device-codes/${deviceCode.code.toLowerCase()}/status`)).body).toEqual({
      code: deviceCode.code,
      redeemed: false,
    });

    const redeemed = await srv.anon.post(`/agents/device-codes/${deviceCode.code}/redeem`);
    expect(redeemed.status, redeemed.text).toBe(200);
    expect(redeemed.body).toMatchObject({ agentId: agent.id, agentName: 'Installer', policy: agent.policy });
    expect(redeemed.body.accessToken).toMatch(/^gat_[0-9a-f]{40}$/);
    const token = redeemed.body.accessToken as string;
    expect(JSON.stringify(await srv.app.ctx.db.selectFrom('agent_tokens').selectAll().execute())).not.toContain(token);

    expect((await p.api.get(`/agents/device-codes/${deviceCode.code}/status`)).body).toEqual({ code: deviceCode.code, redeemed: true });
    const me = await new Client(srv.baseUrl, { bearer: token }).get('/agents/me');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: agent.id, customerId: c.customerId, isConnected: true, policy: agent.policy });
    expect((await p.api.get(`/agents/${agent.id}`)).body.isConnected).toBe(true);

    // Once only; unknown codes are 404; status needs the platform's own credentials.
    expectError(await srv.anon.post(`/agents/device-codes/${deviceCode.code}/redeem`), 400, 'INVALID_INPUT');
    expectError(await srv.anon.post('/agents/device-codes/AGENT-AAAA-BBBB-CCCC/redeem'), 404, 'REFERENCE_NOT_FOUND');
    expectError(await p.api.get('/agents/device-codes/AGENT-AAAA-BBBB-CCCC/status'), 404, 'REFERENCE_NOT_FOUND');
    expectError(await srv.anon.get(`/agents/device-codes/${deviceCode.code}/status`), 401, 'UNAUTHORIZED');
    const q = await srv.newPlatform();
    expectError(await q.api.get(`/agents/device-codes/${deviceCode.code}/status`), 404, 'REFERENCE_NOT_FOUND');
    expect(
      fields(expectError(await srv.anon.post(`/agents/device-codes/${deviceCode.code}/redeem`, { x: 1 }), 400, 'INVALID_INPUT')),
    ).toContain('x');
    // Connected: no new code.
    expectError(await p.api.post(`/agents/${agent.id}/device-codes`), 409, 'CONFLICT');
  });

  it('regenerating invalidates earlier unredeemed codes', async () => {
    const p = await srv.newPlatform();
    const c = await customer(p, 0);
    const { agent, deviceCode: first } = await createAgent(p, c.customerId);
    const regen = await p.api.post(`/agents/${agent.id}/device-codes`);
    expect(regen.status, regen.text).toBe(201);
    expect(regen.body).toMatchObject({ agentId: agent.id, redeemed: false });
    expect(regen.body.code).not.toBe(first.code);
    const third = (await p.api.post(`/agents/${agent.id}/device-codes`)).body;
    expectError(await srv.anon.post(`/agents/device-codes/${first.code}/redeem`), 400, 'INVALID_INPUT');
    expectError(await srv.anon.post(`/agents/device-codes/${regen.body.code}/redeem`), 400, 'INVALID_INPUT');
    expect((await srv.anon.post(`/agents/device-codes/${third.code}/redeem`)).status).toBe(200);
    expect(fields(expectError(await p.api.post(`/agents/${agent.id}/device-codes`, { ttl: 5 }), 400, 'INVALID_INPUT'))).toContain('ttl');
  });

  it('a code expires 24 hours after it was issued (sandbox clock)', async () => {
    const p = await srv.newPlatform();
    const c = await customer(p, 0);
    const early = (await createAgent(p, c.customerId)).deviceCode;
    const late = (await createAgent(p, c.customerId)).deviceCode;
    await advance(p, 24 * 3600 - 60);
    expect((await srv.anon.post(`/agents/device-codes/${early.code}/redeem`)).status).toBe(200);
    await advance(p, 60);
    const res = expectError(await srv.anon.post(`/agents/device-codes/${late.code}/redeem`), 400, 'INVALID_INPUT');
    expect(res.body.message).toMatch(/expired/);
    expect((await p.api.get(`/agents/device-codes/${late.code}/status`)).body).toEqual({ code: late.code, redeemed: false });
  });

  it('deleting an agent makes its code unknown', async () => {
    const p = await srv.newPlatform();
    const c = await customer(p, 0);
    const { agent, deviceCode } = await createAgent(p, c.customerId);
    expect((await p.api.delete(`/agents/${agent.id}`)).status).toBe(204);
    expectError(await srv.anon.post(`/agents/device-codes/${deviceCode.code}/redeem`), 404, 'REFERENCE_NOT_FOUND');
    expectError(await p.api.get(`/agents/device-codes/${deviceCode.code}/status`), 404, 'REFERENCE_NOT_FOUND');
  });
});

describe('POST /sandbox/reset', () => {
  it("wipes the platform's agents with its customers: the token stops working", async () => {
    const p = await srv.newPlatform();
    const c = await customer(p, 0);
    const a = await installAgent(srv, p, c.customerId);
    expect((await p.api.post('/sandbox/reset')).status).toBeLessThan(300);
    expectError(await a.api.get('/agents/me'), 401, 'UNAUTHORIZED');
    expect((await p.api.get('/agents')).body.data).toEqual([]);
  });
});

describe('AgentAuth', () => {
  let p: PlatformHandle;
  beforeAll(async () => {
    p = await srv.newPlatform();
  });

  it('accepts only the agent bearer token on /agents/me, and never on platform routes', async () => {
    const c = await customer(p, 0);
    const a = await installAgent(srv, p, c.customerId);
    expect((await a.api.get('/agents/me')).status).toBe(200);
    expectError(await srv.anon.get('/agents/me'), 401, 'UNAUTHORIZED');
    expectError(await a.api.with({ bearer: 'gat_0000000000000000000000000000000000000000' }).get('/agents/me'), 401, 'UNAUTHORIZED');
    expectError(await a.api.with({ bearer: `${a.token}x` }).get('/agents/me'), 401, 'UNAUTHORIZED');
    const bad = await a.api.with({}).get('/agents/me', { headers: { authorization: `Token ${a.token}` } });
    expectError(bad, 401, 'UNAUTHORIZED');
    expect(bad.headers.get('www-authenticate')).toBe('Bearer');
    // The platform's Basic credentials are not agent credentials.
    expectError(await p.api.get('/agents/me'), 401, 'UNAUTHORIZED');
    expectError(await p.api.get('/agents/me/transactions'), 401, 'UNAUTHORIZED');
    // Nor is the agent token a platform credential.
    expectError(await a.api.get('/customers'), 401, 'UNAUTHORIZED');
    expectError(await a.api.get('/agents'), 401, 'UNAUTHORIZED');
    expectError(await a.api.get(`/agents/${a.id}`), 401, 'UNAUTHORIZED');
    expectError(
      await a.api.post('/transfer-out', { source: { accountId: c.account }, destination: { accountId: c.external }, amount: 1 }),
      401,
      'UNAUTHORIZED',
    );
  });
});
