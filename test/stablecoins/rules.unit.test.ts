/** The pure rules of stablecoin issuance: the amount rule, sandbox outcomes, timelines, provider ids. */
import { describe, expect, it } from 'vitest';
import {
  checkAmount,
  FUNDING_WINDOW_MS,
  issuancePath,
  magicSuffix,
  nextIssuance,
  providerAccountIdFor,
  scenarioOf,
  statusAt,
  timeline,
  verifyCredentials,
} from '../../src/modules/stablecoins/stablecoins.rules.ts';

describe('checkAmount', () => {
  it('accepts whole cents within the safe integers', () => {
    expect(checkAmount('10000', 6)).toEqual({ amount: 10000, cents: 1 });
    expect(checkAmount('0001000000', 6)).toEqual({ amount: 1_000_000, cents: 100 });
    expect(checkAmount('9007199254740000', 6)).toEqual({ amount: 9007199254740000, cents: 900719925474 });
    expect(checkAmount('7', 2)).toEqual({ amount: 7, cents: 7 });
  });

  it('refuses zero, fractions of a cent, unsafe integers and non-digits', () => {
    for (const text of ['0', '9999', '10001', '9007199254740992', '123456789012345678901234567890', '1.0', '-1', '']) {
      expect(checkAmount(text, 6)).toHaveProperty('problem');
    }
    expect(() => checkAmount('1', 1)).toThrow();
  });
});

describe('sandbox selectors', () => {
  it('reads three trailing digits only', () => {
    expect(magicSuffix('client-002')).toBe('002');
    expect(magicSuffix('ACME')).toBe('');
    expect(magicSuffix('x02')).toBe('');
  });

  it('decides credentials (sandbox only)', () => {
    expect(verifyCredentials('a002', true)).toEqual({ kind: 'REFUSED' });
    expect(verifyCredentials('a003', true)).toMatchObject({ kind: 'ACTIVE', lapsesTo: 'REVOKED' });
    expect(verifyCredentials('a004', true)).toMatchObject({ kind: 'ACTIVE', lapsesTo: 'INVALID' });
    expect(verifyCredentials('a007', true)).toMatchObject({ kind: 'ACTIVE', severalAccounts: true });
    expect(verifyCredentials('a002', false)).toEqual({ kind: 'ACTIVE', severalAccounts: false });
  });

  it('decides issuance', () => {
    expect(issuancePath('T001', true).first).toBe('PENDING_REVIEW');
    expect(nextIssuance('PENDING_REVIEW', 'T001', true)).toMatchObject({ to: 'PROVISIONING' });
    expect(nextIssuance('PENDING_REVIEW', 'T002', true)).toEqual({ to: 'REJECTED' });
    expect(nextIssuance('PROVISIONING', 'T003', true)).toEqual({ to: 'FAILED' });
    expect(nextIssuance('PROVISIONING', 'T003', false)).toEqual({ to: 'PROVISIONED' });
    expect(nextIssuance('PROVISIONED', 'T', true)).toBeUndefined();
  });

  it('decides operations by the cents’ last two digits', () => {
    expect([102, 103, 105, 100, 2002].map((c) => scenarioOf(c, true))).toEqual(['FAIL', 'NEVER_FUNDED', 'UNAVAILABLE', 'NORMAL', 'FAIL']);
    expect(scenarioOf(105, false)).toBe('NORMAL');
  });
});

describe('timelines', () => {
  it('walks each flow to its end', () => {
    expect([0, 9_999, 10_000, 15_000, 20_000].map((t) => statusAt('FUNDING', 'NORMAL', t))).toEqual([
      'PENDING_FUNDING',
      'PENDING_FUNDING',
      'PENDING_PROVIDER',
      'PROCESSING',
      'COMPLETED',
    ]);
    expect([0, 5_000, 10_000, 15_000].map((t) => statusAt('DEBIT', 'FAIL', t))).toEqual([
      'CREATED',
      'PENDING_PROVIDER',
      'PROCESSING',
      'FAILED',
    ]);
    expect([0, 5_000, 10_000].map((t) => statusAt('PROVIDER', 'NORMAL', t))).toEqual(['PENDING_PROVIDER', 'PROCESSING', 'COMPLETED']);
    expect(statusAt('FUNDING', 'NEVER_FUNDED', FUNDING_WINDOW_MS - 1)).toBe('PENDING_FUNDING');
    expect(statusAt('FUNDING', 'NEVER_FUNDED', FUNDING_WINDOW_MS)).toBe('EXPIRED');
    expect(statusAt('DEBIT', 'NEVER_FUNDED', 15_000)).toBe('COMPLETED');
    expect(timeline('FUNDING', 'NEVER_FUNDED')).toHaveLength(1);
  });
});

it('derives a stable 27-character provider account id from the client id', () => {
  expect(providerAccountIdFor('abc')).toMatch(/^[0-9A-Za-z]{27}$/);
  expect(providerAccountIdFor('abc')).toBe(providerAccountIdFor('abc'));
  expect(providerAccountIdFor('abd')).not.toBe(providerAccountIdFor('abc'));
});
