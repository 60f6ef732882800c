/**
 * The page of the sandbox's magic values (src/modules/sandbox/magic-values*.ts) against the code:
 * every magic literal in src/ — a 3-digit suffix a rule switches on, a fixed sandbox code or legacy
 * value, a sandbox UMA receiver — is listed on the page, and the probed tables say what the rules do.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SANDBOX_OTP } from '../../src/modules/auth/otp.service.ts';
import { SANDBOX_UMA_RECEIVERS } from '../../src/modules/payments/sandbox-outcomes.ts';
import { magicValueTables } from '../../src/modules/sandbox/magic-values.ts';
import { magicValuesPage } from '../../src/modules/sandbox/magic-values.page.ts';

const SRC = path.resolve(import.meta.dirname, '../../src/modules');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : p.endsWith('.ts') && !p.includes('magic-values') ? [p] : [];
  });
}

/** The magic literals the sandbox code switches on or defines, with where each was found. */
function magicLiterals(): Map<string, string> {
  const found = new Map<string, string>();
  const patterns = [
    /case '(\d{3})':/g, // a suffix rule's switch
    /=== '(\d{3})'/g, // a suffix compared inline
    /^\s+'(\d{3})': '[A-Z_]+',$/gm, // a suffix table (beneficiary verification)
    /export const SANDBOX_[A-Z_]+ = '([^']+)';/g, // fixed sandbox codes and legacy values
  ];
  for (const file of sourceFiles(SRC)) {
    const text = fs.readFileSync(file, 'utf8');
    for (const re of patterns) for (const m of text.matchAll(re)) found.set(m[1]!, path.relative(SRC, file));
  }
  return found;
}

const page = magicValuesPage();
const listed = new Set([...page.matchAll(/<code class="magic-value">([^<]*)<\/code>/g)].map((m) => m[1]!.replace(/&#39;/g, "'")));

describe('the magic values page', () => {
  it('lists every magic literal defined in src/modules', () => {
    const literals = magicLiterals();
    // The scan finds the rules it is meant to find (so an empty scan cannot pass).
    for (const v of ['002', '005', '105', '107', '222', '333', SANDBOX_OTP]) expect(literals.has(v), v).toBe(true);
    const missing = [...literals].filter(([v]) => !listed.has(v)).map(([v, file]) => `${v} (${file})`);
    expect(missing).toEqual([]);
  });

  it('lists every sandbox UMA receiver and the legacy wallet-auth values', () => {
    for (const name of Object.keys(SANDBOX_UMA_RECEIVERS)) expect(listed.has(name), name).toBe(true);
    for (const v of ['sandbox-valid-signature', 'sandbox-valid-passkey-signature', 'sandbox-valid-oidc-token'])
      expect(listed.has(v), v).toBe(true);
  });

  it('its probed tables say what the rules do', () => {
    const table = (id: string) => magicValueTables().find((t) => t.id === id)!;
    const rows = (id: string) => Object.fromEntries(table(id).rows.map((r) => [r.value, r.outcome]));
    expect(Object.keys(rows('quote-execution'))).toEqual(['002', '003', '004', '005', '006', '007']);
    expect(rows('quote-execution')['003']).toBe('completes after 6 min (platform clock)');
    expect(rows('quote-execution')['007']).toMatch(/ACCOUNT_CANNOT_RECEIVE; refund FAILED/);
    expect(table('quote-execution').otherwise).toBe('completes');
    expect(Object.keys(rows('transfer-out'))).toEqual(['002', '003', '004', '005']);
    expect(rows('transfer-out')['005']).toMatch(/^fails after 30 s pending/);
    expect(rows('transfer-in')['002']).toMatch(/COLLECTION_FAILED/);
    expect(rows('kyc-create')).toEqual({ '001': 'kycStatus PENDING', '002': 'kycStatus REJECTED', '003': 'kycStatus UNVERIFIED' });
    expect(Object.keys(rows('card-descriptor'))).toEqual(['002', '003', '005', '006']);
    expect(Object.keys(rows('stablecoin-amounts'))).toEqual(['…02 cents', '…03 cents', '…05 cents']);
    expect(rows('stablecoin-issuance')['002']).toBe('PENDING_REVIEW → REJECTED');
  });

  it('is one self-contained page: no script, no request elsewhere', () => {
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).not.toMatch(/<script|<link|<img|src=|url\(/i);
    for (const t of magicValueTables()) expect(page).toContain(`<section id="${t.id}">`);
  });
});
