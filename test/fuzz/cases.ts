/**
 * Hostile requests for one operation, derived from its valid baseline: structural cases (each kind
 * of mutation at each place it applies, capped by a budget) and seeded random ones. Every case says
 * what it expects: `mustReject` when the request is invalid by construction (a 2xx is a bug), the
 * statuses it may get beyond the documented ones, an exact status for auth failures, and a `pair`
 * for "another platform's id" — it must be answered exactly like an id that exists nowhere.
 */
import { basicHeader } from '../helpers/http.ts';
import { ADMIN_TOKEN } from '../helpers/server.ts';
import { authHeader, baselineBody, pathSlot, pathValues, UNKNOWN_SLOT } from '../helpers/api/baselines.ts';
import { utf8Header, type RawRequest } from './client.ts';
import { bodyValid, fillPath, queryValid, type Operation, type Schema } from '../helpers/api/operations.ts';
import type { Expectation } from './oracle.ts';
import type { Rng } from './rng.ts';
import {
  closedObjects,
  fields,
  getAt,
  jsonType,
  NASTY_NUMBERS,
  nastyStrings,
  setAt,
  stringLeaves,
  TYPE_SAMPLES,
  typeOf,
  type JsonPath,
} from '../helpers/api/values.ts';
import { SLOTS, typePrefix, type World } from '../helpers/api/world.ts';
import { PDF } from '../helpers/kyc.ts';

export interface FuzzCase {
  label: string;
  req: RawRequest;
  exp: Expectation;
  /** Cases with the same pair id must get the same status and error code. */
  pair?: string;
}

export interface GenOptions {
  op: Operation;
  A: World;
  B: World;
  rng: Rng;
  /** Random cases on top of the structural ones. */
  randomCases: number;
  /** Most field-level structural mutations per operation (a random subset beyond it). */
  fieldBudget: number;
  /**
   * Every variant of every structural list for every operation (long runs). Otherwise each
   * operation gets a seeded subset of the lists whose target is shared code (auth header parsing,
   * JSON parsing, content types, id decoding): the union over operations still covers them all.
   */
  thorough: boolean;
  /** The versioned base path, e.g. `/2025-10-13` (document paths already include it). */
  ops: Operation[];
}

/** The parts of a request a mutation changes; `build` turns them into bytes. */
interface Parts {
  method?: string;
  path: Record<string, string>;
  /** Raw query string without `?`. */
  query?: string;
  /** Replaces the auth header when set (null: no Authorization at all). */
  auth?: Record<string, string> | null;
  headers?: Record<string, string>;
  body?: BodyPart;
  /** Appended to the filled path (trailing-slash cases). */
  suffix?: string;
}

type BodyPart =
  | { kind: 'json'; text: string }
  | { kind: 'raw'; bytes: Buffer; contentType: string | null }
  | {
      kind: 'form';
      fields: Record<string, string>;
      files: { name: string; filename: string; type: string; bytes: Buffer }[];
      boundary?: string;
      contentType?: string;
    };

const BOUNDARY = 'fuzzboundary7MA4YWxkTrZu0gW';

export function encodeForm(part: Extract<BodyPart, { kind: 'form' }>): Buffer {
  const b = part.boundary ?? BOUNDARY;
  const chunks: Buffer[] = [];
  for (const [k, v] of Object.entries(part.fields))
    chunks.push(Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`, 'utf8'));
  for (const f of part.files) {
    chunks.push(
      Buffer.from(
        `--${b}\r\nContent-Disposition: form-data; name="${f.name}"; filename="${f.filename}"\r\nContent-Type: ${f.type}\r\n\r\n`,
        'utf8',
      ),
      f.bytes,
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${b}--\r\n`));
  return Buffer.concat(chunks);
}

function build(op: Operation, w: World, p: Parts): RawRequest {
  let path = fillPath(op, p.path) + (p.suffix ?? '');
  if (p.query !== undefined) path += `?${p.query}`;
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...(p.auth === null ? {} : (p.auth ?? authHeader(op, w))),
    ...p.headers,
  };
  let body: Buffer | undefined;
  if (p.body?.kind === 'json') {
    body = Buffer.from(p.body.text, 'utf8');
    headers['content-type'] ??= 'application/json';
  } else if (p.body?.kind === 'raw') {
    body = p.body.bytes;
    if (p.body.contentType !== null) headers['content-type'] = p.body.contentType;
  } else if (p.body?.kind === 'form') {
    body = encodeForm(p.body);
    headers['content-type'] = p.body.contentType ?? `multipart/form-data; boundary=${p.body.boundary ?? BOUNDARY}`;
  }
  return { method: p.method ?? op.method, path, headers, body };
}

const mustReject = (extra: number[] = []): Expectation => ({ mustReject: true, extraAllowed: extra });
const lenient = (extra: number[] = []): Expectation => ({ mustReject: false, extraAllowed: extra });

/** JSON text of `value` with the placeholder string replaced by raw JSON text (numbers JSON cannot carry, deep nests). */
const PLACEHOLDER = '__fuzz_raw_value__';
function withRaw(value: unknown, path: JsonPath, raw: string): string {
  return JSON.stringify(setAt(value, path, PLACEHOLDER)).replace(JSON.stringify(PLACEHOLDER), raw);
}

const pathLabel = (p: JsonPath) => (p.length ? p.join('.') : '(body)');

/** Every case for one operation. */
export function generate(o: GenOptions): FuzzCase[] {
  const { op, A, rng } = o;
  const some = <T>(list: T[], k: number): T[] => subset(list, k, rng, o.thorough);
  const out: FuzzCase[] = [];
  const base: Parts = { path: pathValues(op, A) };
  const bl = baselineBody(op, A);
  const isForm = op.body?.contentType === 'multipart/form-data';
  const bodySchema = op.body?.schema ?? {};
  const docFile = { name: 'file', filename: 'scan.pdf', type: 'application/pdf', bytes: PDF };
  if (bl && !isForm) base.body = { kind: 'json', text: JSON.stringify(bl.body) };
  if (bl && isForm) base.body = { kind: 'form', fields: bl.body as Record<string, string>, files: [docFile] };
  const add = (label: string, parts: Partial<Parts>, exp: Expectation, pair?: string) =>
    out.push({ label, req: build(op, A, { ...base, ...parts, path: { ...base.path, ...parts.path } }), exp, ...(pair ? { pair } : {}) });
  const safe = op.method === 'GET';
  // A's ids appear in the path or body: the request targets A's resources.
  const targetsA =
    op.pathParams.length > 0 || (bl !== undefined && stringLeaves(bl.body).some((l) => Object.values(A.ids).includes(l.value)));

  // --- Bodies -----------------------------------------------------------------------------
  if (bl && !isForm) {
    const body = bl.body;
    const invalid = (v: unknown) => !bodyValid(op, v);
    const expFor = (v: unknown) => (invalid(v) ? mustReject() : lenient());
    for (const text of some(
      [
        '{',
        '{"a":}',
        '[1,]',
        '{"a":1}}',
        "{'a':1}",
        'NaN',
        '\ufeff\ufeff{}',
        '{"a":"\\x"}',
        '{"a":1,}',
        '"unterminated',
        '{"__proto__":{"admin":true}}',
        '{"constructor":{"prototype":{"admin":true}}}',
      ],
      4,
    )) {
      add(`body:malformed ${JSON.stringify(text).slice(0, 40)}`, { body: { kind: 'json', text } }, mustReject([400]));
    }
    for (const v of some([[], 1, 'text', null, true, [body]], 3))
      add(`body:top-level ${jsonType(v)}`, { body: { kind: 'json', text: JSON.stringify(v) } }, mustReject([400]));
    add(
      'body:oversized 1.2 MB',
      { body: { kind: 'json', text: JSON.stringify({ ...(body as object), fuzzPadding: 'x'.repeat(1_200_000) }) } },
      mustReject([400, 413]),
    );
    // Deep enough to overflow any recursive walk of the parsed body (the default stack holds ~10k frames).
    const deep = o.thorough ? 300_000 : 30_000;
    add(`body:deep array ${deep}`, { body: { kind: 'json', text: '['.repeat(deep) + ']'.repeat(deep) } }, mustReject([400]));
    for (const ct of some(
      [
        'text/plain',
        'application/xml',
        'application/x-www-form-urlencoded',
        `multipart/form-data; boundary=${BOUNDARY}`,
        'application/json-patch+json',
        'text/json',
        '',
        null,
      ],
      3,
    )) {
      add(
        `content-type:${ct === null ? 'none' : JSON.stringify(ct)}`,
        { body: { kind: 'raw', bytes: Buffer.from(JSON.stringify(body)), contentType: ct } },
        mustReject([400, 415]),
      );
    }
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
      const top = setAt(body, ['fuzzUnknownField'], 1);
      add('body:unknown top-level field', { body: { kind: 'json', text: JSON.stringify(top) } }, expFor(top));
    }
    const fieldCases: FuzzCase[] = [];
    const fadd = (label: string, text: string, exp: Expectation, pair?: string) =>
      fieldCases.push({ label, req: build(op, A, { ...base, body: { kind: 'json', text } }), exp, ...(pair ? { pair } : {}) });
    for (const path of closedObjects(bodySchema, body)) {
      if (path.length === 0) continue;
      const v = setAt(body, [...path, 'fuzzUnknownNested'], { x: 1 });
      fadd(`body:unknown field in ${pathLabel(path)}`, JSON.stringify(v), expFor(v));
    }
    for (const f of fields(bodySchema, body)) {
      const types = typeOf(f.schema);
      const wrong = Object.keys(TYPE_SAMPLES).filter((t) => !types.includes(t) && !(t === 'integer' && types.includes('number')));
      if (wrong.length > 0) {
        const v = setAt(body, f.path, rng.pick(TYPE_SAMPLES[rng.pick(wrong)]!));
        fadd(`body:wrong type at ${pathLabel(f.path)} (${jsonType(getAt(v, f.path))})`, JSON.stringify(v), expFor(v));
      }
      if (f.present && f.required) {
        const v = setAt(body, f.path, undefined, true);
        fadd(`body:missing required ${pathLabel(f.path)}`, JSON.stringify(v), expFor(v));
      }
      if (types.includes('string')) {
        // NUL cannot be stored in PostgreSQL text; the server refuses it in any input (400).
        const nul = setAt(body, f.path, `fuzz\u0000${String(getAt(body, f.path) ?? '')}`);
        fadd(`body:NUL in ${pathLabel(f.path)}`, JSON.stringify(nul), mustReject([400]));
        const max = typeof f.schema.maxLength === 'number' ? f.schema.maxLength : undefined;
        const long = setAt(body, f.path, 'x'.repeat(max !== undefined ? max + 1 : 70_000));
        fadd(`body:oversized string at ${pathLabel(f.path)}`, JSON.stringify(long), expFor(long));
      }
      if (types.includes('integer') || types.includes('number')) {
        const raw = rng.pick(NASTY_NUMBERS);
        const text = withRaw(body, f.path, raw);
        fadd(`body:number ${raw} at ${pathLabel(f.path)}`, text, expFor(JSON.parse(text)));
      }
      if (types.includes('object') || types.includes('array')) {
        const depth = o.thorough ? 100_000 : 20_000;
        const raw = rng.chance(0.5) ? '['.repeat(depth) + ']'.repeat(depth) : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
        fadd(
          `body:deep nesting at ${pathLabel(f.path)}`,
          withRaw(body, f.path, raw),
          expFor(setAt(body, f.path, raw.startsWith('[') ? [[[]]] : { a: { a: 1 } })),
        );
      }
    }
    // Another platform's ids in the body, each paired with an id that exists nowhere.
    for (const leaf of stringLeaves(body)) {
      const slot = SLOTS.find((s) => A.ids[s] === leaf.value);
      if (!slot) continue;
      const pair = `body-id:${pathLabel(leaf.path)}`;
      const other = setAt(body, leaf.path, o.B.ids[slot]);
      fadd(`body:other platform's ${slot} at ${pathLabel(leaf.path)}`, JSON.stringify(other), mustReject([404]), pair);
      const none = setAt(body, leaf.path, `${typePrefix(leaf.value)}${rng.uuid()}`);
      fadd(`body:nonexistent ${slot} at ${pathLabel(leaf.path)}`, JSON.stringify(none), mustReject([404]), pair);
    }
    out.push(...budgeted(fieldCases, o.fieldBudget, rng));
  }

  if (bl && isForm) {
    const fields0 = bl.body as Record<string, string>;
    const form = (
      f: Record<string, string>,
      files = [docFile],
      extra: Partial<Extract<BodyPart, { kind: 'form' }>> = {},
    ): Partial<Parts> => ({ body: { kind: 'form', fields: f, files, ...extra } });
    add('form:unknown field', form({ ...fields0, fuzzUnknown: 'x' }), mustReject());
    add('form:no file', form(fields0, []), mustReject());
    add('form:two files', form(fields0, [docFile, docFile]), mustReject());
    add('form:file in a text field name', form(fields0, [{ ...docFile, name: 'documentType' }]), mustReject());
    add('form:NUL in filename', form(fields0, [{ ...docFile, filename: 'a\u0000.pdf' }]), mustReject([400]));
    for (const k of Object.keys(fields0)) {
      const { [k]: _omit, ...rest } = fields0;
      add(`form:missing ${k}`, form(rest), mustReject());
      add(`form:NUL in ${k}`, form({ ...fields0, [k]: `a\u0000${fields0[k]}` }), mustReject([400]));
      add(`form:oversized ${k}`, form({ ...fields0, [k]: 'x'.repeat(5000) }), mustReject([400, 413]));
    }
    add(
      'form:garbage boundary',
      {
        body: {
          kind: 'raw',
          bytes: Buffer.from('--nope\r\nContent-Disposition: form-data; name="a"\r\n\r\nb'),
          contentType: `multipart/form-data; boundary=${BOUNDARY}`,
        },
      },
      mustReject([400, 415]),
    );
    add(
      'form:no boundary',
      { body: { kind: 'raw', bytes: encodeForm({ kind: 'form', fields: fields0, files: [docFile] }), contentType: 'multipart/form-data' } },
      mustReject([400, 415]),
    );
    add('form:as JSON', { body: { kind: 'json', text: JSON.stringify(fields0) } }, mustReject([400, 415]));
    add('form:text/plain', { body: { kind: 'raw', bytes: Buffer.from('hello'), contentType: 'text/plain' } }, mustReject([400, 415]));
  }

  // --- Path ids ----------------------------------------------------------------------------
  for (const param of op.pathParams) {
    const slot = pathSlot(op, param.name) ?? UNKNOWN_SLOT;
    const own = A.ids[slot];
    const prefix = typePrefix(own);
    const inSchema = (v: string) =>
      v.length >= Number(param.schema.minLength ?? 0) && v.length <= Number(param.schema.maxLength ?? Infinity);
    const garbage = [
      'x',
      '0',
      '-1',
      'null',
      'undefined',
      '%20',
      '..',
      '%2e%2e',
      '%2F',
      '~',
      '*',
      "'%20OR%20'1'%3D'1",
      `${prefix}`,
      `${prefix}not-a-uuid`,
      encodeURIComponent('Ω💥'),
      'a'.repeat(200),
    ];
    // Typed ids are exact; device codes are matched ignoring case and surrounding space (by design).
    if (prefix)
      garbage.push(encodeURIComponent(own.toLowerCase() === own ? own.toUpperCase() : own.toLowerCase()), encodeURIComponent(`${own} `));
    for (const g of some(garbage, 7)) {
      const decoded = safeDecode(g);
      // A value the parameter schema refuses is a 400 (which the operation must document).
      add(
        `path:${param.name}=${g.slice(0, 40)}`,
        { path: { [param.name]: g } },
        mustReject(decoded !== undefined && inSchema(decoded) ? [404] : []),
      );
    }
    for (const g of some(
      ['%ZZ', '%E2%82', '%', '%C0%AF', '%00', `${encodeURIComponent(own)}%00`, 'a'.repeat(201), 'a'.repeat(300), 'a'.repeat(6000)],
      4,
    )) {
      add(`path:${param.name}=${g.slice(0, 40)} (malformed)`, { path: { [param.name]: g } }, mustReject([400, 404]));
    }
    const others = SLOTS.filter((s) => s !== slot && typePrefix(A.ids[s]) !== prefix);
    for (const s of [rng.pick(others), rng.pick(others)])
      add(`path:${param.name}=A's ${s}`, { path: { [param.name]: encodeURIComponent(A.ids[s]) } }, mustReject([404]));
    // Unauthenticated operations (device-code redemption) have no "own platform" to stay inside.
    if (op.auth === 'none') continue;
    const pair = `path:${param.name}`;
    add(
      `path:${param.name}=other platform's ${slot}`,
      { path: { [param.name]: encodeURIComponent(o.B.ids[slot]) } },
      mustReject([404]),
      pair,
    );
    add(
      `path:${param.name}=nonexistent ${prefix || slot}`,
      { path: { [param.name]: encodeURIComponent(prefix ? `${prefix}${rng.uuid()}` : rng.hex(4).toUpperCase()) } },
      mustReject([404]),
      pair,
    );
  }
  add('path:trailing slash', { suffix: '/' }, mustReject([400, 404]));

  // --- Query strings -----------------------------------------------------------------------
  const qcase = (label: string, query: string, parsed: Record<string, string | string[]>, forceReject = false) => {
    const exp = forceReject || !queryValid(op, parsed) ? mustReject() : lenient();
    if (!exp.mustReject && !safe) return;
    add(label, { query }, exp);
  };
  qcase('query:unknown param', 'fuzzUnknown=1', { fuzzUnknown: '1' });
  qcase('query:unknown array param', 'fuzz[]=1&fuzz[]=2', { 'fuzz[]': ['1', '2'] });
  qcase('query:empty key', '=1', { '': '1' });
  for (const p of op.query) {
    for (const v of queryValues(p.schema, rng))
      qcase(`query:${p.name}=${v.slice(0, 40)}`, `${pct(p.name)}=${pct(v)}`, { [p.name]: Buffer.from(v, 'utf8').toString('utf8') });
    qcase(`query:${p.name} twice`, `${p.name}=1&${p.name}=2`, { [p.name]: ['1', '2'] });
    qcase(`query:${p.name}[]`, `${p.name}[]=1`, { [`${p.name}[]`]: '1' });
    if (typeOf(p.schema).includes('string')) qcase(`query:NUL in ${p.name}`, `${pct(p.name)}=a%00b`, { [p.name]: 'a\u0000b' }, true);
    if (p.name === 'cursor') {
      for (const c of some(
        ['!!!', 'zzzz', b64u('[]'), b64u('{"id":5}'), b64u('null'), b64u('{"id":null}'), b64u('"x"'), 'a'.repeat(512), '%ZZ'],
        4,
      ))
        qcase(`query:cursor=${c.slice(0, 30)}`, `cursor=${c}`, { cursor: c }, true);
      qcase('query:cursor of an unknown id', `cursor=${b64u(JSON.stringify({ id: `Fuzz:${rng.uuid()}` }))}`, { cursor: 'x' });
    }
  }
  if (op.query.length === 0 && !safe) add('query:unknown param on an operation without query', { query: 'fuzz=1' }, mustReject([400]));

  // --- Headers -----------------------------------------------------------------------------
  out.push(...authCases(o, base));
  // Every operation needing more than VIEW (a read such as the fee estimate may be a POST).
  if (op.auth === 'basic' && op.permission !== 'VIEW') {
    add(
      'auth:VIEW-only token',
      { auth: { authorization: basicHeader(A.viewCreds) } },
      { mustReject: true, exact: 403, exactCode: 'FORBIDDEN' },
    );
  }
  if (targetsA && op.auth !== 'none' && op.auth !== 'admin') {
    const other =
      op.auth === 'basic'
        ? { authorization: basicHeader(o.B.platform.creds) }
        : o.B.agentToken
          ? { authorization: `Bearer ${o.B.agentToken}` }
          : undefined;
    if (other) add(`auth:other platform's credentials on A's resources`, { auth: other }, mustReject([404]));
  }
  const declared = new Set(op.headers.map((h) => h.name.toLowerCase()));
  if (declared.has('idempotency-key')) {
    for (const v of some(
      ['', ' ', 'a b', 'x'.repeat(256), 'x'.repeat(8000), 'caf\xe9', utf8Header('日本語キー'), 'tab\there', '"quoted key"\u0080'],
      5,
    )) {
      add(
        `header:Idempotency-Key ${JSON.stringify(v.slice(0, 20))} (${v.length})`,
        { headers: { 'idempotency-key': v } },
        mustReject([400]),
      );
    }
  }
  const signatureMatters = op.operationId !== 'agentExecuteQuote';
  for (const name of ['service-wallet-signature', 'grid-wallet-signature']) {
    if (!declared.has(name) || !signatureMatters) continue;
    const stamps = [
      'garbage',
      '!!!',
      b64u('{}'),
      b64u('[]'),
      b64u('{"publicKey":"02","signature":"00","scheme":"SIGNATURE_SCHEME_TK_API_P256"}'),
      b64u(JSON.stringify({ publicKey: `02${rng.hex(32)}`, signature: rng.hex(70), scheme: 'SIGNATURE_SCHEME_TK_API_P256' })),
      'x'.repeat(5000),
      utf8Header('签名'),
      rng.bytes(32).toString('base64url'),
    ];
    for (const s of some(stamps, 4)) {
      add(`header:${name} ${JSON.stringify(s.slice(0, 24))} without Request-Id`, { headers: { [name]: s } }, mustReject([400, 401]));
    }
    add(
      `header:${name} garbage with unknown Request-Id`,
      { headers: { [name]: rng.pick(stamps), 'request-id': `Request:${rng.uuid()}` } },
      mustReject([400, 401]),
    );
  }
  if (declared.has('request-id')) {
    for (const v of some(['x'.repeat(201), `Request:${rng.uuid()}`, 'garbage', utf8Header('请求'), "' OR '1'='1"], 3)) {
      add(
        `header:Request-Id ${JSON.stringify(v.slice(0, 24))} without a signature`,
        { headers: { 'request-id': v } },
        mustReject([400, 401]),
      );
    }
  }
  if (safe) {
    add(
      'header:junk headers on a read',
      {
        headers: {
          'x-fuzz': rng
            .bytes(40)
            .toString('latin1')
            // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this strips
            .replace(/[\x00-\x08\x0a-\x1f\x7f]/g, '?'),
          'idempotency-key': 'x'.repeat(300),
          'request-id': 'garbage',
        },
      },
      lenient(),
    );
    add('body:garbage on a read', { body: { kind: 'raw', bytes: Buffer.from('{{{'), contentType: 'application/json' } }, lenient([400]));
  }

  // --- Methods -----------------------------------------------------------------------------
  if (o.ops.find((x) => x.path === op.path) === op) {
    const concrete = fillPath(op, base.path);
    for (const m of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      // Another route template may match this concrete path for `m` (`/customers/{id}` matches
      // `/customers/external-accounts`): then it is that route's request, not a wrong method.
      const routes = o.ops.filter((x) => x.method === m && templateMatches(x.path, concrete));
      if (routes.length > 0) continue;
      add(`method:${m}`, { method: m }, { mustReject: true, exact: 405, exactCode: 'METHOD_NOT_ALLOWED' });
    }
    for (const m of ['TRACE', 'PROPFIND', 'OPTIONS']) add(`method:${m}`, { method: m }, mustReject([400, 404, 405]));
  }

  // --- Random ------------------------------------------------------------------------------
  for (let i = 0; i < o.randomCases; i++) out.push(randomCase(o, base, bl?.body, isForm, i));
  return out;
}

/** `k` items of `list` chosen by the seed (all of them when thorough), in list order. */
function subset<T>(list: T[], k: number, rng: Rng, thorough: boolean): T[] {
  if (thorough || list.length <= k) return list;
  const idx = new Set<number>();
  while (idx.size < k) idx.add(rng.int(0, list.length - 1));
  return list.filter((_, i) => idx.has(i));
}

function templateMatches(template: string, path: string): boolean {
  const re = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`);
  return re.test(path);
}

function budgeted(cases: FuzzCase[], budget: number, rng: Rng): FuzzCase[] {
  if (cases.length <= budget) return cases;
  // Keep pairs together: sample whole groups.
  const groups = new Map<string, FuzzCase[]>();
  for (const c of cases) {
    const k = c.pair ?? c.label;
    groups.set(k, [...(groups.get(k) ?? []), c]);
  }
  const keys = [...groups.keys()];
  const chosen: FuzzCase[] = [];
  while (chosen.length < budget && keys.length > 0) chosen.push(...groups.get(keys.splice(rng.int(0, keys.length - 1), 1)[0]!)!);
  return chosen;
}

/** Percent-encodes the UTF-8 bytes of `s` (unlike encodeURIComponent, never throws on lone surrogates). */
function pct(s: string): string {
  return [...Buffer.from(s, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

function safeDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

function b64u(s: string): string {
  return Buffer.from(s, 'utf8').toString('base64url');
}

/** Wrong or edge values for a query parameter, by its schema. */
function queryValues(s: Schema, rng: Rng): string[] {
  const types = typeOf(s);
  const out: string[] = [];
  if (types.includes('integer') || types.includes('number'))
    out.push('abc', '1.5', '1e3', '', '-1', '0', '101', '0x10', '99999999999999999999999', 'NaN', 'Infinity');
  if (types.includes('boolean')) out.push('yes', '2', '', 'TRUE ');
  if (types.includes('array')) out.push(...Array.from({ length: 3 }, () => 'x'.repeat(rng.int(17, 40))));
  if (Array.isArray(s.enum) || s.anyOf) out.push('NOPE', 'pending', '');
  if (s.format === 'date-time') out.push('2025-13-45T00:00:00Z', 'now', '0', '2025-01-01', '');
  if (typeof s.pattern === 'string') out.push('us', '💥', '');
  if (typeof s.maxLength === 'number') out.push('x'.repeat(s.maxLength + 1));
  if (types.includes('string') && out.length === 0) out.push('', rng.pick(nastyStrings(rng)).replaceAll('\u0000', ''));
  return out;
}

/** Authorization headers that must all be refused with 401. */
function authCases(o: GenOptions, base: Parts): FuzzCase[] {
  const { op, A, rng } = o;
  const some = <T>(list: T[], k: number): T[] => subset(list, k, rng, o.thorough);
  const out: FuzzCase[] = [];
  const add = (label: string, auth: Record<string, string> | null) =>
    out.push({ label, req: build(op, A, { ...base, auth }), exp: { mustReject: true, exact: 401 } });
  const flip = (s: string, i: number) => s.slice(0, i) + String.fromCharCode(s.charCodeAt(i) ^ 0x01) + s.slice(i + 1);
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
  if (op.auth === 'basic') {
    const { id, secret } = A.platform.creds;
    add('auth:none', null);
    for (const v of some(
      [
        'Basic',
        'Basic ',
        'Basic !!!',
        `Basic ${b64('nocolon')}`,
        `Basic ${b64(`:${secret}`)}`,
        `Basic ${b64(`${id}:`)}`,
        `Basic ${'A'.repeat(5000)}`,
        `Bearer ${secret}`,
        `Digest username="${id}"`,
        `Basic ${b64(`${id.toUpperCase()}:${secret}`)}`,
        `Basic ${b64(`${'é'.repeat(3)}:${secret}`)}`,
        `Basic ${b64(`${id}:${secret}`).slice(0, -4)}`,
        `Basic ${b64(`${rng.hex(16)}:${secret}`)}`,
        `Basic ${b64(`${'i'.repeat(129)}:${secret}`)}`,
      ],
      4,
    )) {
      add(`auth:${v.slice(0, 30)}`, { authorization: v });
    }
    add('auth:secret differs in the first byte', { authorization: basicHeader({ id, secret: flip(secret, 0) }) });
    add('auth:secret differs in the last byte', { authorization: basicHeader({ id, secret: flip(secret, secret.length - 1) }) });
    add('auth:secret with an extra byte', { authorization: basicHeader({ id, secret: `${secret}x` }) });
    add('auth:secret one byte short', { authorization: basicHeader({ id, secret: secret.slice(0, -1) }) });
    add("auth:A's id with B's secret", { authorization: basicHeader({ id, secret: o.B.platform.creds.secret }) });
  } else if (op.auth === 'agent' && A.agentToken) {
    const t = A.agentToken;
    add('auth:none', null);
    for (const v of some(
      [
        'Bearer',
        'Bearer ',
        `Bearer gat_${rng.hex(20)}`,
        `Bearer gat_${rng.bytes(30).toString('base64url')}`,
        `Bearer ${'g'.repeat(600)}`,
        `Basic ${Buffer.from(`${A.platform.creds.id}:${A.platform.creds.secret}`).toString('base64')}`,
        `Bearer ${t} extra`,
        `Token ${t}`,
      ],
      4,
    )) {
      add(`auth:${v.slice(0, 30)}`, { authorization: v });
    }
    add('auth:token differs in the first byte', { authorization: `Bearer ${flip(t, 0)}` });
    add('auth:token differs in the last byte', { authorization: `Bearer ${flip(t, t.length - 1)}` });
    add('auth:token with an extra byte', { authorization: `Bearer ${t}x` });
    add('auth:token one byte short', { authorization: `Bearer ${t.slice(0, -1)}` });
  } else if (op.auth === 'admin') {
    add('auth:none', null);
    for (const v of [
      'Bearer',
      `Bearer ${flip(ADMIN_TOKEN, 0)}`,
      `Bearer ${flip(ADMIN_TOKEN, ADMIN_TOKEN.length - 1)}`,
      `Bearer ${ADMIN_TOKEN}x`,
      `Bearer ${ADMIN_TOKEN.slice(0, -1)}`,
      `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`,
      `Bearer ${'a'.repeat(600)}`,
    ]) {
      add(`auth:${v.slice(0, 30)}`, { authorization: v });
    }
  }
  return out;
}

/** A random JSON value: nasty strings, edge numbers, small nests. */
function randomJson(rng: Rng, depth = 0): unknown {
  const kind = rng.int(0, depth > 3 ? 3 : 5);
  switch (kind) {
    case 0:
      return rng.pick(nastyStrings(rng));
    case 1:
      return rng.pick([0, -1, 1.5, 1e308, -1e308, 2 ** 53, rng.int(-1e9, 1e9)]);
    case 2:
      return rng.pick([true, false, null]);
    case 3:
      return rng.bytes(rng.int(0, 64)).toString('latin1');
    case 4:
      return Array.from({ length: rng.int(0, 4) }, () => randomJson(rng, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      for (let i = rng.int(0, 4); i > 0; i--) o[rng.pick(['a', 'id', '__proto__x', '', 'amount', rng.hex(3)])] = randomJson(rng, depth + 1);
      return o;
    }
  }
}

/** One random hostile request: a random mutation of the body, a path id, the query or a header. */
function randomCase(o: GenOptions, base: Parts, body: unknown, isForm: boolean, i: number): FuzzCase {
  const { op, A, rng } = o;
  const safe = op.method === 'GET';
  const kinds = [
    ...(body !== undefined && !isForm ? ['body', 'body', 'body'] : []),
    ...(op.pathParams.length ? ['path', 'path'] : []),
    'query',
    'header',
  ];
  const kind = rng.pick(kinds);
  const mk = (label: string, parts: Partial<Parts>, exp: Expectation): FuzzCase => ({
    label: `random#${i} ${label}`,
    req: build(op, A, { ...base, ...parts, path: { ...base.path, ...parts.path } }),
    exp,
  });
  if (kind === 'body') {
    const fs = fields(op.body!.schema, body);
    const f = fs.length > 0 ? rng.pick(fs) : undefined;
    const value = randomJson(rng);
    const v = f ? setAt(body, f.path, value) : value;
    // A string with NUL is refused whatever the field; anything else is judged by the schema.
    const hasNul = stringLeaves(v).some((l) => l.value.includes('\u0000'));
    const exp = hasNul || !bodyValid(op, v) ? mustReject([400]) : lenient();
    return mk(
      `body ${f ? pathLabel(f.path) : '(body)'} = ${JSON.stringify(value)?.slice(0, 60)}`,
      { body: { kind: 'json', text: JSON.stringify(v) ?? 'null' } },
      exp,
    );
  }
  if (kind === 'path') {
    const p = rng.pick(op.pathParams);
    const raw = rng.bytes(rng.int(1, 40));
    const v = rng.chance(0.5) ? pct(raw.toString('latin1')) : [...raw].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
    return mk(`path ${p.name}=${v.slice(0, 60)}`, { path: { [p.name]: v } }, mustReject([400, 404]));
  }
  if (kind === 'query') {
    const p = op.query.length > 0 && rng.chance(0.7) ? rng.pick(op.query).name : `fuzz${rng.hex(2)}`;
    const raw = rng.chance(0.5) ? rng.pick(nastyStrings(rng)) : rng.bytes(rng.int(0, 30)).toString('latin1');
    const query = `${pct(p)}=${pct(raw)}`;
    // What the server sees: the UTF-8 bytes decoded (a lone surrogate arrives as U+FFFD).
    const seen = Buffer.from(raw, 'utf8').toString('utf8');
    const valid = queryValid(op, { [p]: seen }) && !seen.includes('\u0000');
    if (valid && !safe) return mk(`query ${query.slice(0, 60)} (+unknown)`, { query: `${query}&fuzzUnknown=1` }, mustReject([400]));
    return mk(`query ${query.slice(0, 60)}`, { query }, valid ? lenient() : mustReject([400]));
  }
  const name = rng.pick(['idempotency-key', 'service-wallet-signature', 'request-id', 'x-fuzz', 'content-type', 'accept']);
  const value = rng
    .bytes(rng.int(1, 60))
    .toString('latin1')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this strips
    .replace(/[\x00-\x08\x0a-\x1f\x7f]/g, '');
  const declared = op.headers.some((h) => h.name.toLowerCase() === name) && op.operationId !== 'agentExecuteQuote';
  // A declared header with a value it cannot take must be refused; anything else may be ignored.
  const invalid = declared && (name === 'idempotency-key' ? !/^[\x21-\x7e]{1,255}$/.test(value) : value.trim() !== '');
  if (invalid) return mk(`header ${name}=${JSON.stringify(value).slice(0, 60)}`, { headers: { [name]: value } }, mustReject([400, 401]));
  if (!safe)
    return mk(
      `header ${name}=${JSON.stringify(value).slice(0, 60)} (with an unknown query parameter)`,
      { headers: { [name]: value }, query: 'fuzzUnknown=1' },
      mustReject([400, 415]),
    );
  return mk(`header ${name}=${JSON.stringify(value).slice(0, 60)}`, { headers: { [name]: value } }, lenient([400, 415]));
}
