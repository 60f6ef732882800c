/**
 * `corridor trigger <EVENT_TYPE>`: asks a running server (POST /sandbox/trigger) to make a webhook
 * event happen for real, and prints what it created. Like `corridor wallet`, a client: it talks
 * HTTP only and never opens the store. Also the target and request helpers `corridor fixtures` uses.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BASE_PATH } from '../config.ts';

/** A usage problem: exit 2 with the message (src/cli/entry.ts). */
export class CliUsageError extends Error {}

export interface ApiTarget {
  /** The server's origin, e.g. http://127.0.0.1:8080. */
  url: string;
  authorization: string;
  /** Where the credentials came from, for messages. */
  source: string;
}

/**
 * The server and the platform credentials: `--url` (default http://127.0.0.1:$PORT, PORT 8080), and
 * CORRIDOR_CLIENT_ID (or CORRIDOR_TOKEN_ID, the name `corridor start` reads) with
 * CORRIDOR_CLIENT_SECRET, else the credentials `corridor start` saved in DATA_DIR (./.corridor).
 */
export function apiTarget(url: string | undefined, env: NodeJS.ProcessEnv = process.env): ApiTarget {
  const origin = (url ?? `http://127.0.0.1:${env.PORT || '8080'}`).replace(/\/+$/, '').replace(new RegExp(`${BASE_PATH}$`), '');
  try {
    const u = new URL(origin);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new CliUsageError(`--url must be an http:// or https:// URL (got "${origin}")`);
  }
  const id = env.CORRIDOR_CLIENT_ID || env.CORRIDOR_TOKEN_ID;
  const secret = env.CORRIDOR_CLIENT_SECRET;
  if (id && secret) return { url: origin, authorization: basic(id, secret), source: 'the environment' };
  const file = path.join(path.resolve(env.DATA_DIR || '.corridor'), 'credentials.json');
  let saved: { clientId?: unknown; clientSecret?: unknown };
  try {
    saved = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof saved;
  } catch {
    throw new CliUsageError(
      `no credentials: set CORRIDOR_CLIENT_ID and CORRIDOR_CLIENT_SECRET, or run it where "corridor start" saved ${file}`,
    );
  }
  if (typeof saved.clientId !== 'string' || typeof saved.clientSecret !== 'string')
    throw new CliUsageError(`${file} holds no clientId and clientSecret`);
  return { url: origin, authorization: basic(saved.clientId, saved.clientSecret), source: file };
}

function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
}

/** One request to the API; the body parsed when it is JSON. */
export async function callApi(t: ApiTarget, method: string, route: string, body?: unknown): Promise<{ status: number; text: string }> {
  let res: Response;
  try {
    res = await fetch(`${t.url}${BASE_PATH}${route}`, {
      method,
      headers: {
        authorization: t.authorization,
        accept: 'application/json',
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    throw new Error(`cannot reach Corridor at ${t.url}${cause ? ` (${cause})` : ''}: is "corridor start" running? (--url sets where)`);
  }
  return { status: res.status, text: await res.text() };
}

/** Prints a 2xx answer to stdout (exit 0), anything else to stderr (exit 1). */
export function report(res: { status: number; text: string }, out: (s: string) => void = (s) => process.stdout.write(s)): number {
  let pretty = res.text;
  try {
    pretty = JSON.stringify(JSON.parse(res.text), null, 2);
  } catch {
    // Not JSON: printed as it came.
  }
  if (res.status >= 200 && res.status < 300) {
    out(`${pretty}\n`);
    return 0;
  }
  process.stderr.write(`corridor: HTTP ${res.status}\n${pretty}\n`);
  return 1;
}

export async function triggerCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: { url: { type: 'string' } }, allowPositionals: true, strict: true });
  if (positionals.length !== 1) throw new CliUsageError('trigger takes one event type, e.g. corridor trigger OUTGOING_PAYMENT.FAILED');
  // The catalogue's types are upper case; `outgoing_payment.failed` (as the issue writes it) means the same.
  const eventType = positionals[0]!.toUpperCase();
  return report(await callApi(apiTarget(values.url), 'POST', '/sandbox/trigger', { eventType }));
}

/** `trigger …` and `fixtures …` from src/cli/entry.ts: exit 0, 1 (the server refused, or unreachable) or 2 (usage). */
export async function clientCommand(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === 'trigger') return await triggerCommand(rest);
    const { fixturesCommand } = await import('./fixtures.ts');
    return await fixturesCommand(rest);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const argError = typeof (err as { code?: unknown }).code === 'string' && (err as { code: string }).code.startsWith('ERR_PARSE_ARGS');
    process.stderr.write(`corridor: ${message}\n`);
    if (err instanceof CliUsageError || argError) {
      process.stderr.write(`(see: corridor ${command} --help)\n`);
      return 2;
    }
    return 1;
  }
}
