/**
 * How much one fixture load may carry, and how a file's size is counted: a plain module with no
 * imports, shared by the endpoint (fixtures.service.ts) and the CLI that splits a larger file
 * (src/cli/fixtures-split.ts), which must not load the server's code.
 *
 * One load is one transaction, and on SQLite a transaction holds the store's only write lock — and,
 * the driver being synchronous, the event loop — from its first write to its commit: every other
 * platform waits. An entry (a customer, an external account, a balance) costs ~0.3–0.6 ms there
 * (measured 2026-11-27: 1,000 customers 0.6 s, 1,000 customers with 15 balances each 4 s), so a load
 * is at most 100 entries in all (~30–60 ms; 200 entries blocked the fuzz suite's event loop for
 * 241 ms on a busy machine, past the 200 ms every request must stay under). A larger data set is
 * several loads: `corridor fixtures load` splits it.
 */
export const MAX_FIXTURE_ENTRIES = 100;

/** The parts of a fixture file that count: customers with their balances, external accounts, the platform's balances. */
export interface FixtureShape {
  customers?: readonly { ref: string; balances?: readonly unknown[] }[];
  externalAccounts?: readonly { customerRef?: string }[];
  platformBalances?: readonly unknown[];
}

/** The file's entries: customers, external accounts and balances, each one or more writes. */
export function fixtureEntries(f: FixtureShape): number {
  const customers = f.customers ?? [];
  const balances = customers.reduce((n, c) => n + (c.balances?.length ?? 0), 0) + (f.platformBalances?.length ?? 0);
  return customers.length + (f.externalAccounts?.length ?? 0) + balances;
}
