/**
 * Hostile credentials: replayed and forged wallet signatures, forged agent tokens and device codes,
 * secrets that differ from the real one in their first or their last byte (every such comparison
 * must refuse both, and answer both alike), and malformed HTTP that never reaches a route. Seeded
 * like the operation fuzzer: `FUZZ_SEED=<n>` reproduces the random tokens and bytes.
 *
 * Where secrets are compared (see the fuzz report for the full list):
 * - API token secrets (Basic): SHA-256 of the presented secret against the stored SHA-256 with
 *   crypto.timingSafeEqual; an unknown client id is compared against a dummy digest so both paths
 *   do the same work (src/http/auth.ts authenticatePlatform).
 * - The admin bearer token: safeEqual (SHA-256 both sides, then timingSafeEqual) (src/http/auth.ts).
 * - Agent access tokens and device codes: never compared; their SHA-256 is the lookup key, so the
 *   index probe sees a digest of the secret, not the secret.
 * - Wallet stamps: ECDSA verification over the stored payload, not a comparison of secrets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_PATH } from '../../src/config.ts';
import { basicHeader, Client, expectError, type Res } from '../helpers/http.ts';
import { ADMIN_TOKEN, startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { addFirstEmailOtp, keyPair, otpLogin, signed, stamp, walletSetup, type KeyPair } from '../helpers/wallet-auth.ts';
import { closeClient, loopBlocks, parseRawResponse, send, sendBytes } from './client.ts';
import { checkErrorBody } from './oracle.ts';
import { fuzzSeed, Rng } from './rng.ts';
import { diff, snapshot } from '../helpers/api/state.ts';

const SEED = fuzzSeed();
console.log(`[fuzz] credentials: seed=${SEED} — reproduce with FUZZ_SEED=${SEED}`);
const rng = new Rng(SEED);

let srv: TestServer;
let p: PlatformHandle;
let q: PlatformHandle;
let hasAgents = false;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform({ name: 'Fuzz credentials P' });
  q = await srv.newPlatform({ name: 'Fuzz credentials Q' });
  const doc = await srv.anon.get('/openapi.json');
  hasAgents = Object.keys(doc.body.paths).some((path) => path.startsWith(`${BASE_PATH}/agents/me`));
});
afterAll(async () => {
  closeClient();
  await srv?.close();
});

/** The stamp header value decoded: `{publicKey, scheme, signature}`. */
function decodeStamp(value: string): { publicKey: string; scheme: string; signature: string } {
  return JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
}
function encodeStamp(s: { publicKey: string; scheme: string; signature: string }): string {
  return Buffer.from(JSON.stringify(s), 'utf8').toString('base64url');
}
const flipHex = (hex: string, i: number) => hex.slice(0, i) + (parseInt(hex[i]!, 16) ^ 1).toString(16) + hex.slice(i + 1);

interface Wallet {
  accountId: string;
  session: { key: KeyPair };
}

async function wallet(platform: PlatformHandle): Promise<Wallet> {
  const w = await walletSetup(platform);
  const cred = await addFirstEmailOtp(platform.api, w.accountId);
  const session = await otpLogin(platform.api, cred.id);
  return { accountId: w.accountId, session };
}

/** A signed wallet operation on `platform`: its path, body, and a fresh challenge each call. */
function exportOp(platform: PlatformHandle, w: Wallet) {
  const path = `/internal-accounts/${w.accountId}/export`;
  const body = { clientPublicKey: keyPair().publicKeyUncompressed };
  return {
    challenge: async () => {
      const res = await platform.api.post(path, body);
      expect(res.status, res.text).toBe(202);
      return res.body as { payloadToSign: string; requestId: string };
    },
    retry: (stampValue: string, requestId: string) => platform.api.post(path, body, signed(stampValue, requestId)),
  };
}

function expectWallet401(res: Res, codes: string[]): void {
  expect(res.status, res.text).toBe(401);
  expect(codes, res.text).toContain(res.body.code);
  expect(checkErrorBody({ status: res.status, headers: Object.fromEntries(res.headers), text: res.text, json: res.body })).toEqual([]);
}

describe('replayed and forged wallet signatures', () => {
  it('a stamp valid for one challenge is refused on another; refusals consume nothing; a used challenge cannot be replayed', async () => {
    const w = await wallet(p);
    const op = exportOp(p, w);
    const ch1 = await op.challenge();
    const ch2 = await op.challenge();
    const stamp1 = await stamp(w.session.key, ch1.payloadToSign);
    const stamp2 = await stamp(w.session.key, ch2.payloadToSign);

    const before = await snapshot(srv, p.id);
    // Challenge 1's stamp with challenge 2's Request-Id: signed over another payload.
    expectWallet401(await op.retry(stamp1, ch2.requestId), ['WALLET_SIGNATURE_INVALID']);
    // A Request-Id that exists nowhere, and one of another operation on the same wallet.
    expectWallet401(await op.retry(stamp1, `Request:${rng.uuid()}`), ['UNAUTHORIZED']);
    const patch = await p.api.patch(`/internal-accounts/${w.accountId}`, { privateEnabled: true });
    expect(patch.status, patch.text).toBe(202);
    const afterPatchChallenge = await snapshot(srv, p.id);
    expectWallet401(await op.retry(await stamp(w.session.key, patch.body.payloadToSign), patch.body.requestId), [
      'UNAUTHORIZED',
      'WALLET_SIGNATURE_BODY_MISMATCH',
    ]);
    expect(diff(afterPatchChallenge, await snapshot(srv, p.id))).toEqual([]);
    expect(diff(before, afterPatchChallenge).every((t) => t.startsWith('auth_requests'))).toBe(true);

    // Both challenges are still open: the right stamps work, once each.
    expect((await op.retry(stamp2, ch2.requestId)).status).toBe(200);
    expectWallet401(await op.retry(stamp2, ch2.requestId), ['UNAUTHORIZED']);
    expect((await op.retry(stamp1, ch1.requestId)).status).toBe(200);
    expectWallet401(await op.retry(stamp1, ch1.requestId), ['UNAUTHORIZED']);
  });

  it('a forged key, a forged key claiming the session key, and a correct stamp with a flipped byte are refused', async () => {
    const w = await wallet(p);
    const op = exportOp(p, w);
    const ch = await op.challenge();
    const good = await stamp(w.session.key, ch.payloadToSign);
    const before = await snapshot(srv, p.id);

    // A well-formed stamp by a key that is no session of this wallet.
    expectWallet401(await op.retry(await stamp(keyPair(), ch.payloadToSign), ch.requestId), ['WALLET_SIGNATURE_INVALID']);
    // Another key's signature presented under the session's public key.
    const forged = decodeStamp(await stamp(keyPair(), ch.payloadToSign));
    expectWallet401(await op.retry(encodeStamp({ ...forged, publicKey: w.session.key.publicKey }), ch.requestId), [
      'WALLET_SIGNATURE_INVALID',
      'WALLET_SIGNATURE_MALFORMED',
    ]);
    // The correct stamp with one hex digit of its signature flipped: first, middle, last, and random.
    const s = decodeStamp(good);
    const positions = [
      0,
      Math.floor(s.signature.length / 2),
      s.signature.length - 1,
      rng.int(0, s.signature.length - 1),
      rng.int(0, s.signature.length - 1),
    ];
    for (const i of positions) {
      expectWallet401(await op.retry(encodeStamp({ ...s, signature: flipHex(s.signature, i) }), ch.requestId), [
        'WALLET_SIGNATURE_INVALID',
        'WALLET_SIGNATURE_MALFORMED',
      ]);
    }
    // …or of its public key, or one byte of the whole header value.
    expectWallet401(await op.retry(encodeStamp({ ...s, publicKey: flipHex(s.publicKey, s.publicKey.length - 1) }), ch.requestId), [
      'WALLET_SIGNATURE_INVALID',
      'WALLET_SIGNATURE_MALFORMED',
    ]);
    const raw = Buffer.from(good, 'base64url');
    for (const i of [0, raw.length - 1, rng.int(0, raw.length - 1)]) {
      const bytes = Buffer.from(raw);
      bytes[i]! ^= 0x01;
      expectWallet401(await op.retry(bytes.toString('base64url'), ch.requestId), [
        'WALLET_SIGNATURE_INVALID',
        'WALLET_SIGNATURE_MALFORMED',
      ]);
    }
    // The wrong scheme, a truncated signature, garbage JSON.
    expectWallet401(await op.retry(encodeStamp({ ...s, scheme: 'SIGNATURE_SCHEME_TK_API_ED25519' }), ch.requestId), [
      'WALLET_SIGNATURE_INVALID',
      'WALLET_SIGNATURE_MALFORMED',
    ]);
    expectWallet401(await op.retry(encodeStamp({ ...s, signature: s.signature.slice(0, -2) }), ch.requestId), [
      'WALLET_SIGNATURE_INVALID',
      'WALLET_SIGNATURE_MALFORMED',
    ]);
    expectWallet401(await op.retry(Buffer.from('{"publicKey":', 'utf8').toString('base64url'), ch.requestId), [
      'WALLET_SIGNATURE_MALFORMED',
    ]);

    // None of that changed anything; the genuine stamp still works.
    expect(diff(before, await snapshot(srv, p.id))).toEqual([]);
    expect((await op.retry(good, ch.requestId)).status).toBe(200);
  });

  it("a valid stamp and Request-Id of one platform are refused on another platform's request", async () => {
    const wp = await wallet(p);
    const wq = await wallet(q);
    const chP = await exportOp(p, wp).challenge();
    const stampP = await stamp(wp.session.key, chP.payloadToSign);
    const opQ = exportOp(q, wq);
    await opQ.challenge();
    expectWallet401(await opQ.retry(stampP, chP.requestId), ['UNAUTHORIZED']);
    // P's own wallet path with Q's credentials: not found at all.
    expectError(
      await q.api.post(
        `/internal-accounts/${wp.accountId}/export`,
        { clientPublicKey: keyPair().publicKeyUncompressed },
        signed(stampP, chP.requestId),
      ),
      404,
      'REFERENCE_NOT_FOUND',
    );
    expect((await exportOp(p, wp).retry(stampP, chP.requestId)).status).not.toBe(500);
  });
});

describe('forged agent tokens and device codes', () => {
  it('random gat_ tokens, near-miss tokens and a deleted agent’s token get 401 on /agents/me', async () => {
    if (!hasAgents) {
      console.log('[fuzz] agent routes absent from the OpenAPI document: agent token cases not run');
      return;
    }
    const customer = await p.api.post('/customers', {
      customerType: 'INDIVIDUAL',
      platformCustomerId: `fuzz-agent-${rng.hex(4)}`,
      fullName: 'Agent Owner',
      birthDate: '1990-01-15',
      nationality: 'US',
      address: { line1: '1 Main Street', city: 'San Francisco', postalCode: '94105', country: 'US' },
    });
    expect(customer.status, customer.text).toBe(201);
    const policy = {
      permissions: ['VIEW_TRANSACTIONS'],
      defaultExecutionMode: 'AUTO',
      spendingLimits: { currency: 'USD', perTransactionLimit: 1_000 },
    };
    const created = await p.api.post('/agents', { name: 'Fuzz token agent', customerId: customer.body.id, policy });
    expect(created.status, created.text).toBe(201);
    const code = created.body.deviceCode.code as string;

    // Device codes: near misses and random codes are 404 and indistinguishable from each other.
    const flipChar = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const lastAlnum = [...code].map((c, i) => (/[A-Z0-9]/.test(c) ? i : -1)).filter((i) => i >= 0);
    const missCodes = [
      flipChar(code, lastAlnum[0]!),
      flipChar(code, lastAlnum[lastAlnum.length - 1]!),
      `${code}X`,
      code.slice(0, -1),
      rng.hex(8).toUpperCase(),
    ];
    const missBodies = new Set<string>();
    for (const c of missCodes) {
      const res = expectError(await srv.anon.post(`/agents/device-codes/${encodeURIComponent(c)}/redeem`), 404, 'REFERENCE_NOT_FOUND');
      missBodies.add(JSON.stringify({ ...res.body, message: undefined }));
    }
    expect(missBodies.size).toBe(1);
    const redeemed = await srv.anon.post(`/agents/device-codes/${code}/redeem`);
    expect(redeemed.status, redeemed.text).toBe(200);
    const token = redeemed.body.accessToken as string;
    expect(token).toMatch(/^gat_/);
    const me = (t: string | undefined, header?: string) =>
      send(srv.origin, {
        method: 'GET',
        path: `${BASE_PATH}/agents/me`,
        headers: {
          accept: 'application/json',
          ...(header ? { authorization: header } : t !== undefined ? { authorization: `Bearer ${t}` } : {}),
        },
      });
    expect((await me(token)).status).toBe(200);

    const flip = (s: string, i: number) => s.slice(0, i) + String.fromCharCode(s.charCodeAt(i) ^ 0x01) + s.slice(i + 1);
    const forged = [
      ...Array.from({ length: 20 }, () => `gat_${rng.bytes(rng.int(8, 48)).toString('base64url')}`),
      flip(token, 0),
      flip(token, 4),
      flip(token, token.length - 1),
      `${token}x`,
      token.slice(0, -1),
      token.toUpperCase(),
      `gat_${token}`,
      token.slice(4),
    ];
    const bodies = new Set<string>();
    for (const t of forged) {
      const res = await me(t);
      expect(res.status, `${t}: ${res.text}`).toBe(401);
      expect(checkErrorBody(res)).toEqual([]);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      bodies.add(res.text);
    }
    // First-byte and last-byte near misses are answered exactly like random tokens.
    expect(bodies.size).toBe(1);
    for (const h of [
      'Bearer',
      `bearer ${rng.hex(10)}`,
      `Basic ${Buffer.from(`${p.creds.id}:${p.creds.secret}`).toString('base64')}`,
      `Bearer ${'x'.repeat(600)}`,
    ]) {
      expect((await me(undefined, h)).status).toBe(401);
    }
    // Deleting the agent revokes its token at once.
    expect((await p.api.delete(`/agents/${created.body.agent.id}`)).status).toBe(204);
    expect((await me(token)).status).toBe(401);
  });
});

describe('secrets differing in the first or the last byte (constant-time comparisons)', () => {
  const flip = (s: string, i: number) => s.slice(0, i) + String.fromCharCode(s.charCodeAt(i) ^ 0x01) + s.slice(i + 1);

  it('API token secrets: first-byte, last-byte, longer, shorter and unknown-id all get the same 401', async () => {
    const { id, secret } = p.creds;
    const variants = [
      flip(secret, 0),
      flip(secret, secret.length - 1),
      flip(secret, rng.int(1, secret.length - 2)),
      `${secret}A`,
      secret.slice(0, -1),
      '',
      'x',
    ];
    const bodies = new Set<string>();
    for (const s of variants) {
      const res = await send(srv.origin, {
        method: 'GET',
        path: `${BASE_PATH}/config`,
        headers: { authorization: basicHeader({ id, secret: s }) },
      });
      expect(res.status, `secret variant ${JSON.stringify(s.slice(0, 4))}…`).toBe(401);
      expect(checkErrorBody(res)).toEqual([]);
      if (s.length > 0) bodies.add(JSON.stringify(res.json));
    }
    // An unknown client id (compared against the dummy digest) says exactly the same.
    const unknown = await send(srv.origin, {
      method: 'GET',
      path: `${BASE_PATH}/config`,
      headers: { authorization: basicHeader({ id: rng.hex(16), secret }) },
    });
    expect(unknown.status).toBe(401);
    bodies.add(JSON.stringify(unknown.json));
    expect([...bodies]).toHaveLength(1);
    expect((await p.api.get('/config')).status).toBe(200);
  });

  it('the admin token: first-byte, last-byte, longer and shorter all get 401', async () => {
    for (const t of [flip(ADMIN_TOKEN, 0), flip(ADMIN_TOKEN, ADMIN_TOKEN.length - 1), `${ADMIN_TOKEN}0`, ADMIN_TOKEN.slice(0, -1)]) {
      const res = await new Client(srv.origin, { bearer: t }).get('/_admin/ledger/check');
      expectError(res, 401, 'UNAUTHORIZED');
    }
    expect((await srv.admin.get('/_admin/ledger/check')).status).toBe(200);
  });
});

describe('malformed HTTP that never reaches a route', () => {
  const cases: [string, string | Buffer][] = [
    ['garbage request line', 'GARBAGE\r\n\r\n'],
    ['bad Content-Length', `POST ${BASE_PATH}/customers HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n`],
    [
      'Content-Length and Transfer-Encoding',
      `POST ${BASE_PATH}/customers HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    ],
    ['NUL in a header value', Buffer.from(`GET ${BASE_PATH}/config HTTP/1.1\r\nHost: x\r\nX-Fuzz: a\u0000b\r\n\r\n`, 'latin1')],
    ['space in the request target', `GET ${BASE_PATH}/con fig HTTP/1.1\r\nHost: x\r\n\r\n`],
    ['headers over the size limit', `GET ${BASE_PATH}/config HTTP/1.1\r\nHost: x\r\nX-Fuzz: ${'a'.repeat(20_000)}\r\n\r\n`],
    ['request target over the size limit', `GET ${BASE_PATH}/config?${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`],
    [
      'invalid chunk size',
      `POST ${BASE_PATH}/customers HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
    ],
    ['header without a colon', `GET ${BASE_PATH}/config HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n`],
  ];
  for (const [name, bytes] of cases) {
    it(`${name}: 400 with the spec's error body`, async () => {
      const raw = await sendBytes(srv.origin, bytes);
      const parsed = parseRawResponse(raw);
      expect(parsed, raw.slice(0, 300)).toBeDefined();
      expect(parsed!.status).toBe(400);
      let json: unknown;
      try {
        json = JSON.parse(parsed!.body);
      } catch {
        json = undefined;
      }
      expect(
        checkErrorBody({ status: parsed!.status, headers: { 'content-type': parsed!.headers['content-type'] }, text: parsed!.body, json }),
      ).toEqual([]);
      expect((json as { code: string }).code).toBe('INVALID_INPUT');
    });
  }

  it('the server still answers normally afterwards', async () => {
    expect((await p.api.get('/config')).status).toBe(200);
  });
});

describe('the event loop', () => {
  it('no request above blocked it for more than 200 ms', async () => {
    expect(await loopBlocks()).toEqual([]);
  });
});
