/**
 * Signed wallet actions on an EMBEDDED_WALLET account over HTTP: export of the wallet credentials
 * (an HPKE-sealed BIP-39 mnemonic), PATCH of `privateEnabled`, and the legacy
 * `sandbox-valid-signature` stamp — accepted on sandbox platforms only (spec §4.2, §4.12 item 5;
 * facts-auth §4.2–4.3, §8).
 */
import { validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openExportBundle } from '../../src/wallet/crypto/bundle.ts';
import { expectError, type Client } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import {
  addFirstEmailOtp,
  encryptOtp,
  keyPair,
  newWallet,
  passkeyLogin,
  signed,
  signedCall,
  stamp,
  walletSetup,
  walletWithSession,
  type KeyPair,
} from '../helpers/wallet-auth.ts';

const SANDBOX_SIGNATURE = 'sandbox-valid-signature';

let srv: TestServer;
let p: PlatformHandle;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  await walletSetup(p);
});
afterAll(async () => srv?.close());

/** The customer's internal accounts as GET /customers/internal-accounts lists them. */
async function customerAccounts(api: Client, customerId: string): Promise<{ id: string; type: string; privateEnabled?: boolean }[]> {
  const res = await api.get('/customers/internal-accounts', { query: { customerId } });
  expect(res.status).toBe(200);
  return res.body.data;
}

/** Exports the wallet to `client` with a stamp by `signer`; returns the opened mnemonic. */
async function exportMnemonic(api: Client, accountId: string, client: KeyPair, signer: KeyPair): Promise<string> {
  const { result } = await signedCall(
    (o) => api.post(`/internal-accounts/${accountId}/export`, { clientPublicKey: client.publicKeyUncompressed }, o),
    signer,
  );
  expect(result.status, result.text).toBe(200);
  return openExportBundle(result.body.encryptedWalletCredentials, client.privateKey).toString('utf8');
}

describe('POST /internal-accounts/{id}/export', () => {
  it('202, then 200 with a 12-word BIP-39 mnemonic sealed to clientPublicKey; every export yields the same phrase', async () => {
    const w = await walletWithSession(p.api);
    const client = keyPair();
    const path = `/internal-accounts/${w.accountId}/export`;
    const body = { clientPublicKey: client.publicKeyUncompressed };

    const ch = await p.api.post(path, body);
    expect(ch.status).toBe(202);
    expect(ch.body).toEqual({
      payloadToSign: expect.any(String),
      requestId: expect.stringMatching(/^Request:/),
      expiresAt: expect.any(String),
    });
    expect(JSON.parse(ch.body.payloadToSign)).toMatchObject({
      type: 'ACTIVITY_TYPE_EXPORT_WALLET',
      parameters: { targetPublicKey: client.publicKeyUncompressed, walletId: w.accountId },
    });

    const st = signed(await stamp(w.session.key, ch.body.payloadToSign), ch.body.requestId);
    const res = await p.api.post(path, body, st);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ id: w.accountId, encryptedWalletCredentials: expect.any(String) });

    // The sandbox format: unsigned bundle, data = {encappedPublic, ciphertext, organizationId}.
    const bundle = JSON.parse(res.body.encryptedWalletCredentials);
    expect(bundle).toEqual({ version: 'v1.0.0', data: expect.stringMatching(/^[0-9a-f]+$/), dataSignature: '', enclaveQuorumPublic: '' });
    expect(JSON.parse(Buffer.from(bundle.data, 'hex').toString('utf8'))).toEqual({
      encappedPublic: expect.stringMatching(/^04[0-9a-f]{128}$/),
      ciphertext: expect.stringMatching(/^[0-9a-f]+$/),
      organizationId: expect.any(String),
    });
    const mnemonic = openExportBundle(res.body.encryptedWalletCredentials, client.privateKey).toString('utf8');
    expect(mnemonic.split(' ')).toHaveLength(12);
    expect(validateMnemonic(mnemonic, wordlist)).toBe(true);
    expect(() => openExportBundle(res.body.encryptedWalletCredentials, keyPair().privateKey)).toThrow();

    // The challenge was used up.
    expectError(await p.api.post(path, body, st), 401, 'UNAUTHORIZED');
    // A second export (a fresh key, as the docs require) opens to the same phrase; another wallet has its own.
    expect(await exportMnemonic(p.api, w.accountId, keyPair(), w.session.key)).toBe(mnemonic);
    const other = await walletWithSession(p.api);
    const otherMnemonic = await exportMnemonic(p.api, other.accountId, keyPair(), other.session.key);
    expect(validateMnemonic(otherMnemonic, wordlist)).toBe(true);
    expect(otherMnemonic).not.toBe(mnemonic);
  });

  it("401 for another clientPublicKey on the retry or another wallet's session; 400 for a compressed key or a non-wallet account; 404 for another platform's account", async () => {
    const w = await walletWithSession(p.api);
    const path = `/internal-accounts/${w.accountId}/export`;
    const client = keyPair();
    const ch = await p.api.post(path, { clientPublicKey: client.publicKeyUncompressed });
    const st = signed(await stamp(w.session.key, ch.body.payloadToSign), ch.body.requestId);
    expectError(await p.api.post(path, { clientPublicKey: keyPair().publicKeyUncompressed }, st), 401, 'WALLET_SIGNATURE_BODY_MISMATCH');
    const intruder = await walletWithSession(p.api);
    expectError(
      await p.api.post(
        path,
        { clientPublicKey: client.publicKeyUncompressed },
        signed(await stamp(intruder.session.key, ch.body.payloadToSign), ch.body.requestId),
      ),
      401,
      'WALLET_SIGNATURE_INVALID',
    );
    expectError(
      await p.api.post(
        path,
        { clientPublicKey: client.publicKeyUncompressed },
        signed(await stamp(keyPair(), ch.body.payloadToSign), ch.body.requestId),
      ),
      401,
      'WALLET_SIGNATURE_INVALID',
    );

    for (const bad of [
      { clientPublicKey: client.publicKey },
      { clientPublicKey: 'zz' },
      {},
      { clientPublicKey: client.publicKeyUncompressed, walletId: 'x' },
    ]) {
      expectError(await p.api.post(path, bad), 400, 'INVALID_INPUT');
    }
    const compressed = expectError(await p.api.post(path, { clientPublicKey: client.publicKey }), 400, 'INVALID_INPUT');
    expect(compressed.body.details.errors[0].field).toBe('clientPublicKey');

    const fiat = (await customerAccounts(p.api, w.customerId)).find((a) => a.type !== 'EMBEDDED_WALLET');
    expect(fiat).toBeDefined();
    expectError(
      await p.api.post(`/internal-accounts/${fiat!.id}/export`, { clientPublicKey: client.publicKeyUncompressed }),
      400,
      'INVALID_INPUT',
    );

    const other = await srv.newPlatform();
    expectError(await other.api.post(path, { clientPublicKey: client.publicKeyUncompressed }), 404, 'REFERENCE_NOT_FOUND');
    expectError(
      await p.api.post('/internal-accounts/InternalAccount:00000000-0000-7000-8000-000000000000/export', {
        clientPublicKey: client.publicKeyUncompressed,
      }),
      404,
      'REFERENCE_NOT_FOUND',
    );

    // After all that, the original retry still works.
    expect((await p.api.post(path, { clientPublicKey: client.publicKeyUncompressed }, st)).status).toBe(200);
  });
});

describe('PATCH /internal-accounts/{id}', () => {
  it('flips privateEnabled through a signed retry; GET /customers/internal-accounts shows it', async () => {
    const w = await walletWithSession(p.api);
    const before = (await customerAccounts(p.api, w.customerId)).find((a) => a.id === w.accountId)!;
    expect(before.privateEnabled).toBe(false);

    const on = await signedCall((o) => p.api.patch(`/internal-accounts/${w.accountId}`, { privateEnabled: true }, o), w.session.key);
    expect(on.challenge.body).toEqual({
      payloadToSign: expect.any(String),
      requestId: expect.stringMatching(/^Request:/),
      expiresAt: expect.any(String),
    });
    expect(JSON.parse(on.challenge.body.payloadToSign)).toMatchObject({
      type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
      parameters: { encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP', signWith: w.accountId },
    });
    expect(on.result.status, on.result.text).toBe(200);
    expect(on.result.body).toMatchObject({
      id: w.accountId,
      type: 'EMBEDDED_WALLET',
      status: 'ACTIVE',
      privateEnabled: true,
      balance: { currency: { code: 'USDB' } },
    });
    const listed = (await customerAccounts(p.api, w.customerId)).find((a) => a.id === w.accountId);
    expect(listed).toEqual(on.result.body);

    const off = await signedCall((o) => p.api.patch(`/internal-accounts/${w.accountId}`, { privateEnabled: false }, o), w.session.key);
    expect(off.result.status).toBe(200);
    expect(off.result.body.privateEnabled).toBe(false);
    expect((await customerAccounts(p.api, w.customerId)).find((a) => a.id === w.accountId)!.privateEnabled).toBe(false);
  });

  it("400 for an empty body, an unknown field or a non-wallet account; 401 for a different privateEnabled on the retry or a reused Request-Id; 404 for another platform's account", async () => {
    const w = await walletWithSession(p.api);
    const path = `/internal-accounts/${w.accountId}`;
    const empty = expectError(await p.api.patch(path, {}), 400, 'INVALID_INPUT');
    expect(empty.body.details.errors[0].field).toBe('privateEnabled');
    expectError(await p.api.patch(path, { privateEnabled: true, status: 'FROZEN' }), 400, 'INVALID_INPUT');
    expectError(await p.api.patch(path, { privateEnabled: 'yes' }), 400, 'INVALID_INPUT');

    const ch = await p.api.patch(path, { privateEnabled: true });
    const st = signed(await stamp(w.session.key, ch.body.payloadToSign), ch.body.requestId);
    expectError(await p.api.patch(path, { privateEnabled: false }, st), 401, 'WALLET_SIGNATURE_BODY_MISMATCH');
    expect((await p.api.patch(path, { privateEnabled: true }, st)).status).toBe(200);
    expectError(await p.api.patch(path, { privateEnabled: true }, st), 401, 'UNAUTHORIZED');

    const fiat = (await customerAccounts(p.api, w.customerId)).find((a) => a.type !== 'EMBEDDED_WALLET');
    expectError(await p.api.patch(`/internal-accounts/${fiat!.id}`, { privateEnabled: true }), 400, 'INVALID_INPUT');
    const other = await srv.newPlatform();
    expectError(await other.api.patch(path, { privateEnabled: false }), 404, 'REFERENCE_NOT_FOUND');
    expectError(await srv.anon.patch(path, { privateEnabled: false }), 401, 'UNAUTHORIZED');
  });
});

describe('the legacy sandbox-valid-signature stamp', () => {
  it('is accepted on a sandbox platform, even before the wallet has a session', async () => {
    const { accountId, customerId } = await newWallet(p.api);
    const ch = await p.api.patch(`/internal-accounts/${accountId}`, { privateEnabled: true });
    const res = await p.api.patch(
      `/internal-accounts/${accountId}`,
      { privateEnabled: true },
      signed(SANDBOX_SIGNATURE, ch.body.requestId),
    );
    expect(res.status, res.text).toBe(200);
    expect((await customerAccounts(p.api, customerId)).find((a) => a.id === accountId)!.privateEnabled).toBe(true);
    const client = keyPair();
    const ex = await p.api.post(`/internal-accounts/${accountId}/export`, { clientPublicKey: client.publicKeyUncompressed });
    const exported = await p.api.post(
      `/internal-accounts/${accountId}/export`,
      { clientPublicKey: client.publicKeyUncompressed },
      signed(SANDBOX_SIGNATURE, ex.body.requestId),
    );
    expect(exported.status, exported.text).toBe(200);
    expect(validateMnemonic(openExportBundle(exported.body.encryptedWalletCredentials, client.privateKey).toString('utf8'), wordlist)).toBe(
      true,
    );
  });

  it('is refused (401) on a production platform, where a real session stamp works', async () => {
    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    const { accountId } = await walletSetup(prod);
    // OTP login needs a delivered code, which production lacks; a passkey works.
    const session = await passkeyLogin(prod.api, accountId);
    const path = `/internal-accounts/${accountId}`;
    const ch = await prod.api.patch(path, { privateEnabled: true });
    expect(ch.status).toBe(202);
    const refused = expectError(
      await prod.api.patch(path, { privateEnabled: true }, signed(SANDBOX_SIGNATURE, ch.body.requestId)),
      401,
      'WALLET_SIGNATURE_MALFORMED',
    );
    expect(refused.body.reason).toMatch(/sandbox/);
    const ok = await prod.api.patch(
      path,
      { privateEnabled: true },
      signed(await stamp(session.key, ch.body.payloadToSign), ch.body.requestId),
    );
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.privateEnabled).toBe(true);

    const exportBody = { clientPublicKey: keyPair().publicKeyUncompressed };
    const ex = await prod.api.post(`${path}/export`, exportBody);
    expectError(
      await prod.api.post(`${path}/export`, exportBody, signed(SANDBOX_SIGNATURE, ex.body.requestId)),
      401,
      'WALLET_SIGNATURE_MALFORMED',
    );
  });

  it('production platforms do not accept the sandbox OTP code 000000', async () => {
    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    const { accountId } = await walletSetup(prod);
    const created = await prod.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId });
    expect(created.status).toBe(201);
    // No target bundle: nothing could be done with it.
    expect(created.body).not.toHaveProperty('otpEncryptionTargetBundle');
    const cred = created.body as { id: string };
    // Even a well-formed bundle (built against a sandbox platform's target) is refused before any decryption.
    const sandboxWallet = await walletSetup(p);
    const sandboxCred = await addFirstEmailOtp(p.api, sandboxWallet.accountId);
    const res = await prod.api.post(`/auth/credentials/${cred.id}/verify`, {
      type: 'EMAIL_OTP',
      encryptedOtpBundle: await encryptOtp(sandboxCred.bundle, '000000', keyPair()),
    });
    expectError(res, 501, 'NOT_IMPLEMENTED');
    // OAUTH needs an issuer's keys Corridor cannot fetch: also sandbox-only.
    expectError(await prod.api.post('/auth/credentials', { type: 'OAUTH', accountId, oidcToken: 'a.b.c' }), 501, 'NOT_IMPLEMENTED');
    expectError(await prod.api.post(`/auth/credentials/${cred.id}/challenge`, {}), 501, 'NOT_IMPLEMENTED');
    expect((await prod.api.get('/auth/sessions', { query: { accountId } })).body).toEqual({ data: [] });
  });
});
