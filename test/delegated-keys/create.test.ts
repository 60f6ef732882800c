/**
 * POST /auth/delegated-keys over HTTP: the three-leg signed retry (202, 202, 201), the key's states
 * along it, the one-ACTIVE-key rule, every documented 401 of the signed legs, bad input, another
 * platform's ids, permissions, and the live CLI's request shapes (facts-delegated-keys §2–§4, §10).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, type Client } from '../helpers/http.ts';
import { controlledIds } from '../cards/helpers.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import {
  advanceClock,
  keyPair,
  otpLogin,
  passkeyLogin,
  signed,
  stamp,
  walletSetup,
  walletWithSession,
  type Session,
} from '../helpers/wallet-auth.ts';
import { activeKey, activity, createBody, expectChallenge, listKeys, newCard, nextLeg, PATH, pendingKey, storedCard } from './keys.ts';

const SANDBOX_SIGNATURE = 'sandbox-valid-signature';

let srv: TestServer;
let p: PlatformHandle;
/** A wallet of `p` with an OTP session. */
let w: { accountId: string; customerId: string; credentialId: string; session: Session };

beforeAll(async () => {
  srv = await startServer({ deps: { ids: controlledIds() } });
  p = await srv.newPlatform({ name: 'Delegated keys' });
  await walletSetup(p);
  w = await walletWithSession(p.api);
});
afterAll(async () => srv?.close());

describe('the three legs', () => {
  it('202 (identity), 202 (policies), 201 ACTIVE; PENDING in between; nothing listed after the first leg', async () => {
    const body = await createBody(p.api, w);
    const leg1 = await p.api.post(PATH, body);
    const c1 = expectChallenge(leg1);
    expect(Date.parse(c1.expiresAt)).toBeGreaterThan(Date.now());
    const a1 = activity(leg1);
    expect(a1.type).toBe('ACTIVITY_TYPE_CREATE_USERS_V3');
    expect(a1.requestId).toBe(c1.requestId);
    expect(a1.organizationId).toBe(`org_${p.id.replace(/^Platform:/, '')}`);
    const user = (
      a1.parameters.users as { userName: string; apiKeys: { publicKey: string; apiKeyName: string; curveType: string }[] }[]
    )[0]!;
    expect(user.apiKeys).toEqual([
      { apiKeyName: body.nickname, curveType: 'API_KEY_CURVE_P256', publicKey: expect.stringMatching(/^0[23][0-9a-f]{64}$/) },
    ]);
    expect(user.userName).toMatch(/^DelegatedKey:[0-9a-f-]{36}$/);
    // Leg 1 records no key (its identity does not exist yet).
    expect(await listKeys(p.api, { accountId: w.accountId })).toEqual([]);

    const leg2 = await nextLeg(p.api, body, leg1, w.session.key);
    const c2 = expectChallenge(leg2);
    expect(c2.requestId).not.toBe(c1.requestId);
    const a2 = activity(leg2);
    expect(a2.type).toBe('ACTIVITY_TYPE_CREATE_POLICIES');
    expect(JSON.stringify(a2.parameters)).toContain(user.userName);
    const [pending] = await listKeys(p.api, { accountId: w.accountId });
    expect(pending).toMatchObject({ id: user.userName, status: 'PENDING', publicKey: user.apiKeys[0]!.publicKey, nickname: body.nickname });

    const leg3 = await nextLeg(p.api, body, leg2, w.session.key);
    expect(leg3.status, leg3.text).toBe(201);
    expect(Object.keys(leg3.body).sort()).toEqual(
      ['accountId', 'cardId', 'createdAt', 'fundingSourceId', 'id', 'nickname', 'publicKey', 'status', 'updatedAt'].sort(),
    );
    expect(leg3.body).toMatchObject({
      id: user.userName,
      cardId: body.cardId,
      accountId: w.accountId,
      publicKey: user.apiKeys[0]!.publicKey,
      nickname: body.nickname,
      status: 'ACTIVE',
      fundingSourceId: expect.stringMatching(/^CardFundingSource:[0-9a-f-]{36}$/),
    });
    expect(leg3.body.fundingSourceId).toBe(pending!.fundingSourceId);
    expect(Date.parse(leg3.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(leg3.body.createdAt));
    expect(leg3.text).not.toMatch(/private/i);

    const got = await p.api.get(`${PATH}/${leg3.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(leg3.body);
    expect(await listKeys(p.api, { fundingSourceId: leg3.body.fundingSourceId })).toEqual([leg3.body]);
  });

  it('the body on the retries may list its fields in another order (it is compared canonically)', async () => {
    const body = await createBody(p.api, w, 'reordered');
    const leg1 = await p.api.post(PATH, body);
    const reordered = { nickname: body.nickname, internalAccountId: body.internalAccountId, cardId: body.cardId };
    const leg2 = await nextLeg(p.api, reordered, leg1, w.session.key);
    expect((await nextLeg(p.api, reordered, leg2, w.session.key)).status).toBe(201);
  });

  it('each stamped leg may use any active session of the wallet', async () => {
    const other = await otpLogin(p.api, w.credentialId);
    const body = await createBody(p.api, w);
    const leg1 = await p.api.post(PATH, body);
    const leg2 = await nextLeg(p.api, body, leg1, w.session.key);
    expect((await nextLeg(p.api, body, leg2, other.key)).status).toBe(201);
  });

  it('a funding source has one ACTIVE key: 409 on every leg while it has one; another card or wallet is another source', async () => {
    const body = await createBody(p.api, w);
    const early = await pendingKey(p.api, body, w.session.key);
    const key = await activeKey(p.api, body, w.session.key);
    const conflict = expectError(await p.api.post(PATH, body), 409, 'CONFLICT');
    expect(conflict.body.details).toEqual({ delegatedKeyId: key.id, fundingSourceId: key.fundingSourceId });
    // The flow started before the key became ACTIVE is refused at its last leg, before its challenge is used …
    expectError(await nextLeg(p.api, body, early.leg2, w.session.key), 409, 'CONFLICT');
    // … and completes once the ACTIVE key is revoked.
    expect((await p.api.delete(`${PATH}/${key.id}`)).status).toBe(204);
    const late = await nextLeg(p.api, body, early.leg2, w.session.key);
    expect(late.status, late.text).toBe(201);
    expect(late.body.fundingSourceId).toBe(key.fundingSourceId);

    const otherCard = await activeKey(p.api, { ...body, cardId: await newCard(p.api, w) }, w.session.key);
    expect(otherCard.fundingSourceId).not.toBe(key.fundingSourceId);
    const v = await walletWithSession(p.api);
    const otherWallet = await activeKey(p.api, { ...body, internalAccountId: v.accountId }, v.session.key);
    expect(otherWallet.fundingSourceId).not.toBe(key.fundingSourceId);
  });

  it('two last legs racing for one funding source: one ACTIVE key (201), the other 409 and still PENDING', async () => {
    const v = await walletWithSession(p.api);
    const body = await createBody(p.api, v);
    const a = await pendingKey(p.api, body, v.session.key);
    const b = await pendingKey(p.api, body, v.session.key);
    const results = await Promise.all([a.leg2, b.leg2].map((leg2) => nextLeg(p.api, body, leg2, v.session.key)));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    expectError(results.find((r) => r.status === 409)!, 409, 'CONFLICT');
    const keys = await listKeys(p.api, { accountId: v.accountId });
    expect(keys.map((k) => k.status).sort()).toEqual(['ACTIVE', 'PENDING']);
  });

  it('an abandoned flow leaves a PENDING key that blocks nothing', async () => {
    const v = await walletWithSession(p.api);
    const body = await createBody(p.api, v);
    await pendingKey(p.api, body, v.session.key);
    const key = await activeKey(p.api, body, v.session.key);
    const listed = await listKeys(p.api, { accountId: v.accountId });
    expect(listed.map((k) => k.status)).toEqual(['ACTIVE', 'PENDING']);
    expect(listed[1]!.fundingSourceId).toBe(key.fundingSourceId);
  });

  it('sandbox-valid-signature stands in for the stamps on a sandbox platform', async () => {
    const body = await createBody(p.api, w);
    const leg1 = await p.api.post(PATH, body);
    const leg2 = await p.api.post(PATH, body, signed(SANDBOX_SIGNATURE, expectChallenge(leg1).requestId));
    const leg3 = await p.api.post(PATH, body, signed(SANDBOX_SIGNATURE, expectChallenge(leg2).requestId));
    expect(leg3.status, leg3.text).toBe(201);
  });

  it('a PRODUCTION platform takes real stamps only', async () => {
    const prod = await srv.newPlatform({ name: 'Delegated keys production', environment: 'PRODUCTION' });
    const prodWallet = await walletSetup(prod);
    const { accountId } = prodWallet;
    const session = await passkeyLogin(prod.api, accountId);
    const body = { cardId: await storedCard(srv, prod.id, prodWallet), internalAccountId: accountId, nickname: 'Card payments key' };
    const leg1 = await prod.api.post(PATH, body);
    const sandboxLeg = await prod.api.post(PATH, body, signed(SANDBOX_SIGNATURE, expectChallenge(leg1).requestId));
    expectError(sandboxLeg, 401, 'WALLET_SIGNATURE_MALFORMED');
    const leg2 = await nextLeg(prod.api, body, leg1, session.key);
    expect((await nextLeg(prod.api, body, leg2, session.key)).status).toBe(201);
  });
});

describe('the signed legs refuse (401, with the failed check as reason) and change nothing', () => {
  /** Leg 1 of a fresh body, and the wallet's keys after it. */
  async function started(): Promise<{ body: Awaited<ReturnType<typeof createBody>>; leg1: Awaited<ReturnType<Client['post']>> }> {
    const body = await createBody(p.api, w);
    return { body, leg1: await p.api.post(PATH, body) };
  }

  async function refused(res: Awaited<ReturnType<Client['post']>>, code: string): Promise<void> {
    expectError(res, 401, code);
    expect(res.body.reason).toEqual(expect.any(String));
    expect(res.body.details.reason).toBe(res.body.reason);
  }

  it('a stamp without Request-Id, a Request-Id without stamp, an unknown Request-Id', async () => {
    const { body, leg1 } = await started();
    const before = await listKeys(p.api, { accountId: w.accountId });
    const s = await stamp(w.session.key, leg1.body.payloadToSign);
    await refused(await p.api.post(PATH, body, signed(s)), 'REQUEST_ID_MISSING');
    await refused(await p.api.post(PATH, body, { headers: { 'request-id': leg1.body.requestId } }), 'WALLET_SIGNATURE_MISSING');
    await refused(await p.api.post(PATH, body, signed(s, 'Request:00000000-0000-4000-8000-000000000000')), 'UNAUTHORIZED');
    expect(await listKeys(p.api, { accountId: w.accountId })).toEqual(before);
    // The challenge is still good.
    expectChallenge(await nextLeg(p.api, body, leg1, w.session.key));
  });

  it('a malformed stamp, a stamp over another payload, a key that is no session of this wallet, a revoked session', async () => {
    const { body, leg1 } = await started();
    const rid = leg1.body.requestId;
    await refused(await p.api.post(PATH, body, signed('not-a-stamp', rid)), 'WALLET_SIGNATURE_MALFORMED');
    await refused(await p.api.post(PATH, body, signed(await stamp(w.session.key, 'another payload'), rid)), 'WALLET_SIGNATURE_INVALID');
    await refused(await p.api.post(PATH, body, signed(await stamp(keyPair(), leg1.body.payloadToSign), rid)), 'WALLET_SIGNATURE_INVALID');
    const v = await walletWithSession(p.api);
    await refused(
      await p.api.post(PATH, body, signed(await stamp(v.session.key, leg1.body.payloadToSign), rid)),
      'WALLET_SIGNATURE_INVALID',
    );
    const gone = await otpLogin(p.api, w.credentialId);
    const revoke = await p.api.delete(`/auth/sessions/${gone.id}`);
    expect(
      (
        await p.api.delete(
          `/auth/sessions/${gone.id}`,
          signed(await stamp(w.session.key, revoke.body.payloadToSign), revoke.body.requestId),
        )
      ).status,
    ).toBe(204);
    await refused(await p.api.post(PATH, body, signed(await stamp(gone.key, leg1.body.payloadToSign), rid)), 'WALLET_SIGNATURE_INVALID');
  });

  it('a retry with another body, or for another wallet', async () => {
    const { body, leg1 } = await started();
    const s = signed(await stamp(w.session.key, leg1.body.payloadToSign), leg1.body.requestId);
    await refused(await p.api.post(PATH, { ...body, nickname: 'changed' }, s), 'WALLET_SIGNATURE_BODY_MISMATCH');
    await refused(await p.api.post(PATH, { ...body, cardId: await newCard(p.api, w) }, s), 'WALLET_SIGNATURE_BODY_MISMATCH');
    const v = await walletWithSession(p.api);
    await refused(await p.api.post(PATH, { ...body, internalAccountId: v.accountId }, s), 'UNAUTHORIZED');
    // The second leg's body is checked as strictly.
    const leg2 = await p.api.post(PATH, body, s);
    const s2 = signed(await stamp(w.session.key, expectChallenge(leg2).payloadToSign), leg2.body.requestId);
    await refused(await p.api.post(PATH, { ...body, nickname: 'changed' }, s2), 'WALLET_SIGNATURE_BODY_MISMATCH');
    expect((await p.api.post(PATH, body, s2)).status).toBe(201);
  });

  it('a challenge answers once, and not after it expired', async () => {
    const { body, leg1 } = await started();
    const s = signed(await stamp(w.session.key, leg1.body.payloadToSign), leg1.body.requestId);
    expectChallenge(await p.api.post(PATH, body, s));
    await refused(await p.api.post(PATH, body, s), 'UNAUTHORIZED');
    const keys = await listKeys(p.api, { accountId: w.accountId });

    // A fresh wallet: the clock advance outlives the shared session.
    const v = await walletWithSession(p.api);
    const late = await createBody(p.api, v);
    const first = await p.api.post(PATH, late);
    await advanceClock(p.api, 301);
    const fresh = await otpLogin(p.api, v.credentialId);
    const expired = await p.api.post(PATH, late, signed(await stamp(fresh.key, first.body.payloadToSign), first.body.requestId));
    await refused(expired, 'UNAUTHORIZED');
    expect(expired.body.reason).toMatch(/expired/);
    expect(await listKeys(p.api, { accountId: v.accountId })).toEqual([]);
    expect((await listKeys(p.api, { accountId: w.accountId })).length).toBe(keys.length);
    w = { ...w, session: await otpLogin(p.api, w.credentialId) };
  });
});

describe('bad input, unknown ids, permissions', () => {
  it('400 INVALID_INPUT naming the field: missing fields, nickname length, unknown fields, wrong types, no body', async () => {
    const body = await createBody(p.api, w);
    for (const [bad, field] of [
      [{ ...body, nickname: undefined }, 'nickname'],
      [{ ...body, cardId: undefined }, 'cardId'],
      [{ ...body, internalAccountId: undefined }, 'internalAccountId'],
      [{ ...body, nickname: '' }, 'nickname'],
      [{ ...body, nickname: 'x'.repeat(257) }, 'nickname'],
      [{ ...body, cardId: 7 }, 'cardId'],
      [{ ...body, publicKey: '02'.padEnd(66, 'a') }, 'publicKey'],
    ] as const) {
      const res = expectError(await p.api.post(PATH, bad), 400, 'INVALID_INPUT');
      expect(res.body.details.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    expect((await p.api.post(PATH, { ...body, nickname: 'x'.repeat(256) })).status).toBe(202);
    expectError(await p.api.post(PATH), 400, 'INVALID_INPUT');
  });

  it('an account that is not an embedded wallet: 400 on internalAccountId', async () => {
    const accounts = await p.api.get('/customers/internal-accounts', { query: { customerId: w.customerId } });
    const usd = accounts.body.data.find((a: { type: string }) => a.type !== 'EMBEDDED_WALLET').id;
    const res = expectError(await p.api.post(PATH, { ...(await createBody(p.api, w)), internalAccountId: usd }), 400, 'INVALID_INPUT');
    expect(res.body.details.errors).toEqual([{ field: 'internalAccountId', message: expect.any(String) }]);
  });

  it('404 for an unknown account, another platform’s wallet (the same answer) and an id that cannot be a card', async () => {
    const q = await srv.newPlatform({ name: 'Delegated keys other' });
    await walletSetup(q);
    const theirs = await walletWithSession(q.api);
    const unknown = expectError(
      await p.api.post(PATH, {
        ...(await createBody(p.api, w)),
        internalAccountId: 'InternalAccount:00000000-0000-4000-8000-000000000000',
      }),
      404,
      'REFERENCE_NOT_FOUND',
    );
    const theirBody = await createBody(q.api, theirs);
    const foreign = expectError(
      await p.api.post(PATH, { ...theirBody, cardId: (await createBody(p.api, w)).cardId }),
      404,
      'REFERENCE_NOT_FOUND',
    );
    expect(foreign.body.message.replace(theirs.accountId, 'X')).toBe(unknown.body.message.replace(/InternalAccount:\S+/, 'X'));
    // Nor with their session's stamp on a signed leg.
    const leg1 = await q.api.post(PATH, theirBody);
    const s = signed(await stamp(theirs.session.key, leg1.body.payloadToSign), leg1.body.requestId);
    expectError(await p.api.post(PATH, theirBody, s), 404, 'REFERENCE_NOT_FOUND');
    // No card of this platform: ill-formed ids, an id no card has, and another platform's real card.
    for (const cardId of ['Card:nope', 'card-1', 'Card:00000000-0000-7000-8000-000000000000', theirBody.cardId]) {
      expectError(await p.api.post(PATH, { ...(await createBody(p.api, w)), cardId }), 404, 'REFERENCE_NOT_FOUND');
    }
  });

  it('401 without credentials; 403 for a token without MANAGE (VIEW, TRANSACT), decided before the body', async () => {
    expectError(await srv.anon.post(PATH, await createBody(p.api, w)), 401, 'UNAUTHORIZED');
    for (const perm of ['VIEW', 'TRANSACT']) {
      const t = await p.api.post('/tokens', { name: `dk ${perm}`, permissions: [perm] });
      const api = p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
      expectError(await api.post(PATH, await createBody(p.api, w)), 403, 'FORBIDDEN');
      expectError(await api.post(PATH, { bogus: true }), 403, 'FORBIDDEN');
    }
  });
});

describe('the live CLI’s request shapes (cli/src/commands/auth.ts, cli/src/client.ts)', () => {
  it('create with Grid-Wallet-Signature / Request-Id headers, get with the id unencoded, list, revoke without a body', async () => {
    const cli = p.api.with({ basic: p.creds });
    const body = { cardId: await newCard(p.api, w), internalAccountId: w.accountId, nickname: 'cli key' };
    const headers = (sig: string, rid: string) => ({
      headers: { 'Grid-Wallet-Signature': sig, 'Request-Id': rid, Accept: 'application/json' },
    });
    const leg1 = await cli.post(PATH, body, { headers: { Accept: 'application/json' } });
    const leg2 = await cli.post(PATH, body, headers(await stamp(w.session.key, leg1.body.payloadToSign), leg1.body.requestId));
    expectChallenge(leg2);
    const leg3 = await cli.post(PATH, body, headers(await stamp(w.session.key, leg2.body.payloadToSign), leg2.body.requestId));
    expect(leg3.status, leg3.text).toBe(201);
    const id: string = leg3.body.id;
    expect((await cli.get(`${PATH}/${id}`)).body.id).toBe(id);
    expect((await cli.get(PATH, { query: { accountId: w.accountId } })).body.data.map((k: { id: string }) => k.id)).toContain(id);
    expect((await cli.get(PATH, { query: { fundingSourceId: leg3.body.fundingSourceId } })).body.data[0].id).toBe(id);
    // `revoke` sends DELETE with Authorization and Accept only.
    const res = await fetch(`${p.api.base}${PATH}/${id}`, {
      method: 'DELETE',
      headers: { Authorization: `Basic ${Buffer.from(`${p.creds.id}:${p.creds.secret}`).toString('base64')}`, Accept: 'application/json' },
    });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
  });
});
