/** The pure rules of invitations: UMA address parsing, code drawing, the status an invitation shows. */
import { describe, expect, it } from 'vitest';
import {
  CODE_LENGTH,
  effectiveStatus,
  invitationUrl,
  newInvitationCode,
  normalizeCode,
  parseUmaAddress,
} from '../../src/modules/invitations/invitations.rules.ts';
import { testRng } from '../helpers/random.ts';

describe('parseUmaAddress', () => {
  it('accepts $user@host and returns it in lowercase', () => {
    expect(parseUmaAddress('$Alice.B-c_d+e@Sub.Example.COM')).toEqual({ address: '$alice.b-c_d+e@sub.example.com' });
    expect(parseUmaAddress('$success.usd@sandbox.uma.money')).toEqual({ address: '$success.usd@sandbox.uma.money' });
    expect(parseUmaAddress('$a@p0123456789ab.corridor.localhost')).toEqual({ address: '$a@p0123456789ab.corridor.localhost' });
    expect(parseUmaAddress(`$${'a'.repeat(63)}@x.io`)).toHaveProperty('address');
  });

  it('refuses anything else with a reason', () => {
    for (const bad of [
      '',
      'alice@example.com',
      '$alice',
      '$@example.com',
      '$alice@',
      '$al ice@example.com',
      '$alice@example',
      '$alice@-example.com',
      '$alice@example-.com',
      '$alice@exa_mple.com',
      '$alice@.example.com',
      '$alice@example..com',
      '$alice@@example.com',
      `$${'a'.repeat(64)}@x.io`,
      ` $alice@example.com`,
      '$ålice@example.com',
    ]) {
      expect(parseUmaAddress(bad), bad).toHaveProperty('problem');
    }
  });
});

describe('invitation codes', () => {
  it('are 12 characters of the Crockford alphabet, and differ draw to draw', () => {
    const rng = testRng();
    const source = { bytes: (n: number) => Buffer.from(Array.from({ length: n }, () => rng.int(0, 255))) };
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const code = newInvitationCode(source);
      expect(code).toHaveLength(CODE_LENGTH);
      expect(code).toMatch(/^[0-9abcdefghjkmnpqrstvwxyz]+$/);
      seen.add(code);
    }
    expect(seen.size).toBe(2000);
  });

  it('use every character of the alphabet (all 60 bits reach the code)', () => {
    const allOnes = newInvitationCode({ bytes: (n) => Buffer.alloc(n, 0xff) });
    expect(allOnes).toBe('z'.repeat(12));
    expect(newInvitationCode({ bytes: (n) => Buffer.alloc(n, 0) })).toBe('0'.repeat(12));
  });

  it('are found whatever their case, and make the live link format', () => {
    expect(normalizeCode('7K2M9Q4X8R3T')).toBe('7k2m9q4x8r3t');
    expect(invitationUrl('7k2m9q4x8r3t')).toBe('https://uma.me/i/7k2m9q4x8r3t');
  });
});

describe('effectiveStatus', () => {
  const at = Date.parse('2030-01-01T00:00:00.000Z');
  it('reads a PENDING invitation as EXPIRED from its expiresAt on, and leaves final states alone', () => {
    const pending = { status: 'PENDING' as const, expires_at: '2030-01-01T00:00:00.000Z' };
    expect(effectiveStatus(pending, at - 1)).toBe('PENDING');
    expect(effectiveStatus(pending, at)).toBe('EXPIRED');
    expect(effectiveStatus({ status: 'PENDING', expires_at: null }, at * 2)).toBe('PENDING');
    expect(effectiveStatus({ status: 'CLAIMED', expires_at: '2030-01-01T00:00:00.000Z' }, at + 1)).toBe('CLAIMED');
    expect(effectiveStatus({ status: 'CANCELLED', expires_at: '2030-01-01T00:00:00.000Z' }, at + 1)).toBe('CANCELLED');
  });
});
