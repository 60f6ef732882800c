/**
 * `corridor wallet …` as a child process: each subcommand's output round-trips through the server
 * primitives (keygen → stamp → verify, encrypt-otp → open, seal → decrypt-bundle), stdin
 * arguments work, usage errors exit 2, and no server configuration is needed. Spawns run in
 * parallel: each one is a Node process of its own.
 */
import { spawn } from 'node:child_process';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generateKeyPair } from '../../src/wallet/client.ts';
import { sealCredentialBundle, sealExportBundle } from '../../src/wallet/crypto/bundle.ts';
import { compressPublicKeyHex, keyObjectToPublicKeyHex, publicKeyFromPrivateKeyHex } from '../../src/wallet/crypto/keys.ts';
import { createOtpEncryptionTargetBundle, openEncryptedOtpBundle } from '../../src/wallet/crypto/otp.ts';
import { verifyWalletStamp } from '../../src/wallet/crypto/stamp.ts';
import { SESSION_KEY_VECTOR } from './vectors.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Each spawn is a Node process: fast alone, slower on a busy 2-core machine. */
const SLOW = 240_000;

interface Done {
  code: number | null;
  stdout: string;
  stderr: string;
}

function wallet(args: string[], opts: { stdin?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Done> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/corridor.js', 'wallet', ...args], {
      cwd: ROOT,
      env: { ...process.env, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 200_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(opts.stdin ?? '');
  });
}

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const signer = { privateKey, publicKeyHex: keyObjectToPublicKeyHex(createPublicKey(privateKey)) };

describe('corridor wallet', () => {
  it(
    'keygen (both encodings, no server configuration needed) → stamp (argument or stdin) → verifyWalletStamp',
    async () => {
      const [u, c] = await Promise.all([
        // A broken server configuration does not matter: the wallet helpers never read it.
        wallet(['keygen'], { env: { PORT: 'not-a-port', DATABASE_URL: 'bogus://x' } }),
        wallet(['keygen', '--compressed']),
      ]);
      expect(u.code).toBe(0);
      expect(c.code).toBe(0);
      const uk = JSON.parse(u.stdout) as { privateKey: string; publicKey: string };
      const ck = JSON.parse(c.stdout) as { privateKey: string; publicKey: string };
      expect(uk.publicKey).toMatch(/^04[0-9a-f]{128}$/);
      expect(publicKeyFromPrivateKeyHex(uk.privateKey, false)).toBe(uk.publicKey);
      expect(ck.publicKey).toMatch(/^0[23][0-9a-f]{64}$/);
      expect(publicKeyFromPrivateKeyHex(ck.privateKey)).toBe(ck.publicKey);

      const payload = '{"organizationId":"org_1","parameters":{"privateEnabled":true},"timestampMs":"1","type":"ACTIVITY_TYPE_UPDATE"}';
      const [arg, piped] = await Promise.all([
        wallet(['stamp', ck.privateKey, payload]),
        wallet(['stamp', uk.privateKey, '-'], { stdin: `${payload}\n` }),
      ]);
      expect(arg.code).toBe(0);
      expect(verifyWalletStamp(arg.stdout.trim(), payload)).toMatchObject({ ok: true, publicKey: ck.publicKey });
      expect(piped.code).toBe(0);
      // One trailing newline of stdin is dropped; the stamp carries the compressed key.
      expect(verifyWalletStamp(piped.stdout.trim(), payload)).toMatchObject({ ok: true, publicKey: compressPublicKeyHex(uk.publicKey) });
      expect(verifyWalletStamp(piped.stdout.trim(), `${payload}\n`).ok).toBe(false);
    },
    SLOW,
  );

  it(
    'encrypt-otp output opens with the target key and carries the TEK; a wrong pinned signer exits 1',
    async () => {
      const target = createOtpEncryptionTargetBundle(signer);
      const tek = generateKeyPair();
      const [res, viaStdin, pinnedWrong] = await Promise.all([
        wallet(['encrypt-otp', target.otpEncryptionTargetBundle, tek.publicKey, '000000', '--signer-key', signer.publicKeyHex]),
        wallet(['encrypt-otp', '-', tek.publicKey, '123456'], { stdin: target.otpEncryptionTargetBundle }),
        wallet(['encrypt-otp', target.otpEncryptionTargetBundle, tek.publicKey, '000000', '--signer-key', tek.publicKey]),
      ]);
      expect(res.code).toBe(0);
      expect(openEncryptedOtpBundle(res.stdout.trim(), target.targetPrivateKeyHex)).toMatchObject({
        ok: true,
        otpCode: '000000',
        publicKey: compressPublicKeyHex(tek.publicKey),
        publicKeyAsSent: tek.publicKey,
      });
      expect(openEncryptedOtpBundle(viaStdin.stdout.trim(), target.targetPrivateKeyHex)).toMatchObject({ ok: true, otpCode: '123456' });
      expect(pinnedWrong.code).toBe(1);
      expect(pinnedWrong.stderr).toMatch(/signature/);
    },
    SLOW,
  );

  it(
    'decrypt-bundle prints the session key hex, and the export mnemonic with --text',
    async () => {
      const client = generateKeyPair();
      const sessionPriv = 'ed'.repeat(32);
      const bundle = sealCredentialBundle(client.publicKey, Buffer.from(sessionPriv, 'hex'));
      const mnemonic = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
      const exported = sealExportBundle(client.publicKey, mnemonic, { organizationId: 'org', signer: null });
      const [vector, res, text, wrongKey] = await Promise.all([
        wallet(['decrypt-bundle', SESSION_KEY_VECTOR.encryptedSessionSigningKey, SESSION_KEY_VECTOR.clientPrivHex]),
        wallet(['decrypt-bundle', bundle, client.privateKey]),
        wallet(['decrypt-bundle', '-', client.privateKey, '--text'], { stdin: exported }),
        wallet(['decrypt-bundle', bundle, SESSION_KEY_VECTOR.clientPrivHex]),
      ]);
      expect(vector).toMatchObject({ code: 0, stdout: `${SESSION_KEY_VECTOR.sessionPrivHex}\n` });
      expect(res).toMatchObject({ code: 0, stdout: `${sessionPriv}\n` });
      expect(text).toMatchObject({ code: 0, stdout: `${mnemonic}\n` });
      expect(wrongKey.code).toBe(1);
      expect(wrongKey.stdout).toBe('');
    },
    SLOW,
  );

  it(
    'usage errors and bad keys exit 2 with a message; help exits 0; the main usage lists wallet',
    async () => {
      const cases = [['nope'], ['stamp', 'only-one'], ['stamp', 'not-a-key', 'payload'], ['keygen', '--bogus']];
      const mainHelp = new Promise<string>((resolve) => {
        const child = spawn(process.execPath, ['bin/corridor.js', 'help'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.on('close', () => resolve(out));
      });
      const [help, ...results] = await Promise.all([wallet(['help']), ...cases.map((args) => wallet(args))]);
      results.forEach((res, i) => {
        expect(res.code, cases[i]!.join(' ')).toBe(2);
      });
      expect(results[0]!.stderr).toMatch(/unknown wallet subcommand/);
      expect(results[0]!.stderr).toMatch(/encrypt-otp/);
      expect(results[1]!.stderr).toMatch(/expected <privHex> <payload>/);
      expect(results[2]!.stderr).toMatch(/private key/);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/decrypt-bundle/);
      expect(await mainHelp).toMatch(/wallet keygen\|encrypt-otp\|stamp\|decrypt-bundle/);
    },
    SLOW,
  );
});
