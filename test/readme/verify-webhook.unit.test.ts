/**
 * The README's `verifyWebhook`, exactly as a reader copies it: the ```ts block under "Verifying
 * webhooks" is written to a file of its own, compiled and imported, then given a real signed
 * webhook, and the requests a receiver must refuse without crashing (no header, malformed header,
 * malformed signature, another platform's key, a changed body).
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The first ```ts block of the README's "Verifying webhooks" section. */
function readmeVerifySnippet(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.split('\n## Verifying webhooks\n')[1]?.split('\n## ')[0];
  const block = section && /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('README has no ```ts block under "## Verifying webhooks"');
  return block;
}

type Verify = (rawBody: Buffer, signatureHeader: string | undefined, publicKeyPem: string) => boolean;
let verifyWebhook: Verify;
let dir: string;

beforeAll(async () => {
  const source = readmeVerifySnippet();
  // It must compile as TypeScript on its own (strict), not only run.
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-readme-ts-'));
  const file = path.join(dir, 'verify.ts');
  fs.writeFileSync(file, source);
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    types: ['node'],
    typeRoots: [path.join(ROOT, 'node_modules/@types')],
    skipLibCheck: true,
  });
  const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  expect(problems, source).toEqual([]);
  const js = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
  const mjs = path.join(dir, 'verify.mjs');
  fs.writeFileSync(mjs, js);
  ({ verifyWebhook } = (await import(pathToFileURL(mjs).href)) as { verifyWebhook: Verify });
});
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** A platform's webhook key pair and a body signed the way Corridor signs (ECDSA P-256, SHA-256, DER, base64). */
function keyPair() {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(), privateKey };
}

describe("README's verifyWebhook", () => {
  const key = keyPair();
  const body = Buffer.from('{"id":"Webhook:0199","type":"TEST","timestamp":"2025-10-13T09:30:00.120Z","data":{}}');
  const header = JSON.stringify({ v: '1', s: sign('sha256', body, key.privateKey).toString('base64') });

  it('accepts a signed body', () => {
    expect(verifyWebhook(body, header, key.publicPem)).toBe(true);
  });

  it('returns false, without throwing, for a missing or malformed header or signature', () => {
    const cases: [string, string | undefined][] = [
      ['missing header', undefined],
      ['empty header', ''],
      ['not JSON', 'v=1,s=abc'],
      ['JSON null', 'null'],
      ['JSON without s', '{"v":"1"}'],
      ['s not a string', '{"v":"1","s":42}'],
      ['s not a DER signature', '{"v":"1","s":"bm90IGEgc2lnbmF0dXJl"}'],
      ['truncated JSON', header.slice(0, 20)],
    ];
    for (const [name, h] of cases) expect(() => verifyWebhook(body, h, key.publicPem), name).not.toThrow();
    for (const [name, h] of cases) expect(verifyWebhook(body, h, key.publicPem), name).toBe(false);
  });

  it('returns false for another key or a changed body', () => {
    expect(verifyWebhook(body, header, keyPair().publicPem)).toBe(false);
    expect(verifyWebhook(Buffer.from(body.toString().replace('TEST', 'TESX')), header, key.publicPem)).toBe(false);
  });
});
