/**
 * `corridor fixtures load <file.json>` and `corridor fixtures export [--out FILE]`: thin clients of
 * POST and GET /sandbox/fixtures on a running server (format: docs/fixtures.schema.json).
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { MAX_FIXTURE_ENTRIES } from '../modules/devtools/fixtures.limits.ts';
import { type FixtureFile, splitFixture } from './fixtures-split.ts';
import { type ApiTarget, apiTarget, callApi, CliUsageError, report } from './trigger.ts';

export async function fixturesCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    options: { url: { type: 'string' }, out: { type: 'string' } },
    allowPositionals: true,
    strict: true,
  });
  if (sub === 'load') {
    if (positionals.length !== 1 || values.out !== undefined)
      throw new CliUsageError('fixtures load takes one file: corridor fixtures load <file.json>');
    const file = positionals[0]!;
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new Error(`${file}: ${err instanceof Error ? err.message : String(err)}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new Error(`${file} is not JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
    const target = apiTarget(values.url);
    const parts = splittable(parsed) ? splitFixture(parsed) : [];
    // A file that fits one load (or that the server will refuse anyway) goes as its bytes are: the
    // server validates it and names what is wrong.
    if (parts.length <= 1) return report(await callApi(target, 'POST', '/sandbox/fixtures', text));
    return loadInParts(target, parts);
  }
  if (sub === 'export') {
    if (positionals.length !== 0) throw new CliUsageError('fixtures export takes no file argument (use --out FILE)');
    const out = values.out;
    const res = await callApi(apiTarget(values.url), 'GET', '/sandbox/fixtures');
    // Owner-only (0600, as credentials.json): the file holds customers' names, birth dates, addresses and bank account numbers.
    return report(res, out === undefined ? undefined : (s) => fs.writeFileSync(out, s, { mode: 0o600 }));
  }
  throw new CliUsageError('fixtures takes "load" or "export"');
}

/** Whether a parsed file has the shape the splitter reads (anything else is the server's to refuse). */
function splittable(v: unknown): v is FixtureFile {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const f = v as Record<string, unknown>;
  const list = (k: string) => f[k] === undefined || Array.isArray(f[k]);
  if (!list('customers') || !list('externalAccounts') || !list('platformBalances')) return false;
  const customers = (f.customers ?? []) as unknown[];
  return customers.every((c) => typeof c === 'object' && c !== null && typeof (c as { ref?: unknown }).ref === 'string');
}

/**
 * A file over one load's limit, as parts loaded one after another (fixtures-split.ts): each part is
 * all or nothing; when one is refused, the earlier ones stay loaded and the message says so. Prints
 * the ids of every part together, as one load would.
 */
async function loadInParts(target: ApiTarget, parts: FixtureFile[]): Promise<number> {
  process.stderr.write(`corridor: loading in ${parts.length} parts of at most ${MAX_FIXTURE_ENTRIES} entries, each all or nothing\n`);
  const all: { customers: unknown[]; externalAccounts: unknown[] } = { customers: [], externalAccounts: [] };
  for (const [i, part] of parts.entries()) {
    const res = await callApi(target, 'POST', '/sandbox/fixtures', part);
    if (res.status < 200 || res.status >= 300) {
      const done = `(${all.customers.length} customers, ${all.externalAccounts.length} external accounts)`;
      const loaded = i === 0 ? 'nothing was loaded' : i === 1 ? `part 1 is loaded ${done}` : `parts 1–${i} are loaded ${done}`;
      process.stderr.write(`corridor: part ${i + 1} of ${parts.length} was refused; ${loaded}\n`);
      return report(res);
    }
    const got = JSON.parse(res.text) as { customers?: unknown[]; externalAccounts?: unknown[] };
    all.customers.push(...(got.customers ?? []));
    all.externalAccounts.push(...(got.externalAccounts ?? []));
  }
  return report({ status: 200, text: JSON.stringify(all) });
}
