/**
 * Builders shared by the SCA tests: SCA (EEA-address) and non-SCA customers, an independent RFC 6238
 * TOTP (node:crypto HMAC-SHA1, not otpauth), limited-permission clients, the sandbox clock.
 */
import { createHmac } from 'node:crypto';
import { expect } from 'vitest';
import { create, individual, type Wire } from '../helpers/customers.ts';
import type { Client, Res } from '../helpers/http.ts';
import { usAccountInfo } from '../helpers/payments.ts';
import { uniqueAccountNumber, uniqueId } from '../helpers/random.ts';
import type { PlatformHandle } from '../helpers/server.ts';

export type { Wire };

export const DE_ADDRESS = { line1: 'Unter den Linden 1', city: 'Berlin', postalCode: '10117', country: 'DE' };

/** A customer whose address is in the EEA (an SCA customer). */
export async function scaCustomer(api: Client, overrides: Record<string, unknown> = {}): Promise<string> {
  const body = individual({
    platformCustomerId: uniqueId('sca'),
    email: `${uniqueId('sca')}@example.com`,
    address: DE_ADDRESS,
    ...overrides,
  });
  return (await create(api, body)).id as string;
}

/** A customer with a US address (SCA does not apply). */
export async function usCustomer(api: Client): Promise<string> {
  return (await create(api, individual({ platformCustomerId: uniqueId('us'), email: `${uniqueId('us')}@example.com` }))).id as string;
}

/** A customer external account of `customerId`. */
export async function externalAccount(api: Client, customerId: string): Promise<string> {
  const res = await api.post('/customers/external-accounts', {
    customerId,
    currency: 'USD',
    accountInfo: { ...usAccountInfo('001'), accountNumber: uniqueAccountNumber('001') },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

/** A client of `p` whose token holds only `permissions`. */
export async function limitedClient(p: PlatformHandle, permissions: string[]): Promise<Client> {
  const res = await p.api.post('/tokens', { name: `sca ${permissions.join('+')}`, permissions });
  expect(res.status, res.text).toBe(201);
  return p.api.with({ basic: { id: res.body.clientId, secret: res.body.clientSecret } });
}

/** Moves the platform's sandbox clock; returns its new time (ms). */
export async function advance(api: Client, seconds: number): Promise<number> {
  const res = await api.post('/sandbox/clock/advance', { seconds });
  expect(res.status, res.text).toBe(200);
  return Date.parse(res.body.now);
}

/** The platform's sandbox clock now (ms). */
export async function platformNow(api: Client): Promise<number> {
  const res = await api.get('/sandbox/clock');
  expect(res.status, res.text).toBe(200);
  return Date.parse(res.body.now);
}

// ── RFC 6238 (independent of otpauth) ────────────────────────────────────────────────────────

/** RFC 4648 base32 decoding. */
export function base32Decode(s: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const c of s.replace(/=+$/, '').toUpperCase()) {
    const i = alphabet.indexOf(c);
    if (i < 0) throw new Error(`not base32: ${c}`);
    value = (value << 5) | i;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** The RFC 6238 code (HMAC-SHA1, 6 digits, 30 s steps) of `key` at `timeMs`. */
export function totp(key: Buffer, timeMs: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(timeMs / 1000 / 30)));
  const mac = createHmac('sha1', key).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const bin = ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!;
  return String(bin % 1_000_000).padStart(6, '0');
}

/** A code different from `code` (a wrong guess that is also not the sandbox's 123456). */
export function wrongCode(code: string): string {
  const guess = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
  return guess === '123456' ? '654321' : guess;
}

/** The `details.errors[0].field` of a 400. */
export function fieldOf(res: Res): string | undefined {
  return res.body?.details?.errors?.[0]?.field;
}
