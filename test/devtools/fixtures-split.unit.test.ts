/**
 * How `corridor fixtures load` cuts a file over one load's limit (src/cli/fixtures-split.ts): every
 * customer stays with its balances and its external accounts, in file order; the platform's own
 * entries follow; no part is over the limit; a file that fits is left whole.
 */
import { describe, expect, it } from 'vitest';
import { splitFixture, type FixtureFile } from '../../src/cli/fixtures-split.ts';
import { fixtureEntries } from '../../src/modules/devtools/fixtures.limits.ts';

const customer = (ref: string, balances = 0) => ({
  ref,
  customer: { customerType: 'INDIVIDUAL', platformCustomerId: ref },
  ...(balances ? { balances: Array.from({ length: balances }, () => ({ currency: 'USD', amount: 1 })) } : {}),
});
const account = (customerRef?: string) => ({ ...(customerRef ? { customerRef } : {}), currency: 'USD', accountInfo: {} });

describe('splitFixture', () => {
  it('leaves a file that fits one load whole', () => {
    const f: FixtureFile = { version: 1, customers: [customer('a', 2)], externalAccounts: [account('a')] };
    expect(splitFixture(f, 4)).toEqual([f]);
  });

  it('keeps each customer with its balances and accounts, fills parts in order, and puts the platform’s entries last', () => {
    const f: FixtureFile = {
      version: 1,
      customers: [customer('a', 1), customer('b'), customer('c', 2)],
      externalAccounts: [account('c'), account(), account('a'), account('b')],
      platformBalances: [{ currency: 'USD', amount: 5 }],
    };
    const parts = splitFixture(f, 4);
    // a is 3 entries, b 2, c 4, the platform's account and balance 1 each: greedy in file order.
    expect(parts.map((p) => fixtureEntries(p))).toEqual([3, 2, 4, 2]);
    expect(parts.every((p) => p.version === 1)).toBe(true);
    expect(parts[0]).toEqual({ version: 1, customers: [customer('a', 1)], externalAccounts: [account('a')] });
    expect(parts[1]).toEqual({ version: 1, customers: [customer('b')], externalAccounts: [account('b')] });
    expect(parts[2]).toEqual({ version: 1, customers: [customer('c', 2)], externalAccounts: [account('c')] });
    expect(parts[3]).toEqual({ version: 1, externalAccounts: [account()], platformBalances: [{ currency: 'USD', amount: 5 }] });
    // Every entry is in exactly one part.
    expect(parts.reduce((n, p) => n + fixtureEntries(p), 0)).toBe(fixtureEntries(f));
    expect(parts.flatMap((p) => p.externalAccounts ?? [])).toHaveLength(4);
    expect(parts.flatMap((p) => p.platformBalances ?? [])).toEqual([{ currency: 'USD', amount: 5 }]);
    // An account is always in the part of the customer it names.
    for (const p of parts) {
      const refs = new Set((p.customers ?? []).map((c) => c.ref));
      for (const e of p.externalAccounts ?? []) if (e.customerRef !== undefined) expect(refs.has(e.customerRef)).toBe(true);
    }
  });

  it('sends an account naming no customer of the file in the first part, where the server refuses it first', () => {
    const parts = splitFixture(
      { version: 1, customers: [customer('a'), customer('b'), customer('c')], externalAccounts: [account('zz')] },
      2,
    );
    expect(parts[0]!.externalAccounts).toEqual([account('zz')]);
  });

  it('refuses a customer that alone is over the limit', () => {
    expect(() => splitFixture({ version: 1, customers: [customer('big', 5)] }, 3)).toThrow(/"big".*6 entries/);
  });
});
