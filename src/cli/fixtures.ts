/**
 * `corridor fixtures load <file.json>` and `corridor fixtures export [--out FILE]`: thin clients of
 * POST and GET /sandbox/fixtures on a running server (format: docs/fixtures.schema.json).
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { apiTarget, callApi, CliUsageError, report } from './trigger.ts';

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
    try {
      JSON.parse(text);
    } catch (err) {
      throw new Error(`${file} is not JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
    // The file's bytes as they are: the server validates them and names what is wrong.
    return report(await callApi(apiTarget(values.url), 'POST', '/sandbox/fixtures', text));
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
