/**
 * A fixture file larger than one load (MAX_FIXTURE_ENTRIES) as several files that each load on
 * their own: every customer stays with its balances and the external accounts that name it
 * (`customerRef` refers only within one file), in file order; the platform's own external accounts
 * and balances fill the parts after them. Each part is one transaction on the server — all or
 * nothing — but the parts are loaded one after another, so a failing part leaves the earlier ones
 * loaded (`corridor fixtures load` says which).
 */
import { fixtureEntries, type FixtureShape, MAX_FIXTURE_ENTRIES } from '../modules/devtools/fixtures.limits.ts';

interface Customer {
  ref: string;
  balances?: unknown[];
  [k: string]: unknown;
}
interface External {
  customerRef?: string;
  [k: string]: unknown;
}
export interface FixtureFile extends FixtureShape {
  version?: unknown;
  customers?: Customer[];
  externalAccounts?: External[];
  platformBalances?: unknown[];
  [k: string]: unknown;
}

/** `file` as parts of at most `max` entries each; the file itself when it fits. */
export function splitFixture(file: FixtureFile, max = MAX_FIXTURE_ENTRIES): FixtureFile[] {
  if (fixtureEntries(file) <= max) return [file];
  const { customers = [], externalAccounts = [], platformBalances = [], ...rest } = file;
  const known = new Set(customers.map((c) => c.ref));
  // An external account naming no customer of the file goes with the first part, where the server
  // refuses it (naming it) before anything of the file is written.
  const orphans = externalAccounts.filter((e) => e.customerRef !== undefined && !known.has(e.customerRef));
  const parts: FixtureFile[] = [];
  let part: Required<Pick<FixtureFile, 'customers' | 'externalAccounts' | 'platformBalances'>> = {
    customers: [],
    externalAccounts: [...orphans],
    platformBalances: [],
  };
  let size = orphans.length;
  const close = () => {
    if (size === 0) return;
    parts.push({ ...rest, ...nonEmpty(part) });
    part = { customers: [], externalAccounts: [], platformBalances: [] };
    size = 0;
  };
  const add = (n: number, put: () => void) => {
    if (size + n > max) close();
    put();
    size += n;
  };
  for (const c of customers) {
    const own = externalAccounts.filter((e) => e.customerRef === c.ref);
    const n = 1 + (c.balances?.length ?? 0) + own.length;
    if (n > max)
      throw new Error(`customer "${c.ref}" with its balances and external accounts is ${n} entries; one load takes at most ${max}`);
    add(n, () => {
      part.customers.push(c);
      part.externalAccounts.push(...own);
    });
  }
  for (const e of externalAccounts.filter((x) => x.customerRef === undefined)) add(1, () => part.externalAccounts.push(e));
  for (const b of platformBalances) add(1, () => part.platformBalances.push(b));
  close();
  return parts;
}

/** The part without its empty arrays (a file says only what it holds). */
function nonEmpty(p: Pick<FixtureFile, 'customers' | 'externalAccounts' | 'platformBalances'>): Partial<FixtureFile> {
  return Object.fromEntries(Object.entries(p).filter(([, v]) => Array.isArray(v) && v.length > 0));
}
