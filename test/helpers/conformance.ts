/**
 * Live-schema conformance (issue #21): every JSON response a test receives through the test HTTP
 * client, and every webhook a test receiver gets, is validated against the live API's OpenAPI
 * document (test/conformance/live-openapi.yaml, Apache-2.0) for its operation and status, with
 * Ajv's JSON Schema 2020-12 dialect (OpenAPI 3.1's). A violation fails the request's test.
 *
 * - Renames: the spec's account-type names (US_ACCOUNT, LAYER2_WALLET, CHAIN2_WALLET) are mapped to
 *   the live ones before validating (docs/decisions.md, "Canonical names"). LIGHTNING is the live
 *   API's own name (LIGHTNING_ACCOUNT is only an alias its discriminator accepts).
 * - Not checked: operations the live document does not have (the sandbox clock, health, admin
 *   routes), statuses it does not declare for the operation, and bodies that are not JSON.
 * - `CORRIDOR_CONFORMANCE=off` turns the check off; `=report` appends violations to the file named
 *   by `CORRIDOR_CONFORMANCE_REPORT` instead of failing (for surveying a change), and what was
 *   checked to `<that file>.checked` after each test file.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';
import { BASE_PATH } from '../../src/config.ts';
import { toLiveNames } from '../../src/lib/wire-names.ts';

export { toLiveNames };

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export const LIVE_DOCUMENT = fileURLToPath(new URL('../conformance/live-openapi.yaml', import.meta.url));

// biome-ignore lint/suspicious/noExplicitAny: the parsed OpenAPI document is walked by key
type Json = any;

interface Route {
  method: string;
  template: string;
  pattern: RegExp;
  params: number;
}

interface Live {
  doc: Json;
  ajv: Ajv2020;
  routes: Route[];
  validators: Map<string, ValidateFunction | null>;
  /** Event type → the webhook schema's pointer. */
  webhooks: Map<string, string>;
}

let live: Live | undefined;

const pointer = (...parts: string[]) => `#/${parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;

function load(): Live {
  if (live) return live;
  const doc = parse(fs.readFileSync(LIVE_DOCUMENT, 'utf8'));
  widenPaymentAccountType(doc);
  widenWebhookTypes(doc);
  widenError400(doc);
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'live');
  const routes: Route[] = [];
  for (const [template, item] of Object.entries<Json>(doc.paths)) {
    for (const method of Object.keys(item)) {
      if (!['get', 'post', 'patch', 'put', 'delete'].includes(method)) continue;
      const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
      routes.push({ method, template, pattern: new RegExp(`^${source}$`), params: (template.match(/\{/g) ?? []).length });
    }
  }
  // Literal segments win over parameters (`/customers/external-accounts` over `/customers/{customerId}`).
  routes.sort((a, b) => a.params - b.params);
  const webhooks = new Map<string, string>();
  for (const [name, item] of Object.entries<Json>(doc.webhooks ?? {})) {
    const ref: string | undefined = item.post?.requestBody?.content?.['application/json']?.schema?.$ref;
    const schema = ref ? doc.components.schemas[ref.split('/').pop()!] : undefined;
    for (const part of schema?.allOf ?? []) {
      for (const type of part.properties?.type?.enum ?? [])
        webhooks.set(type, `live${pointer('webhooks', name, 'post', 'requestBody', 'content', 'application/json', 'schema')}`);
    }
  }
  live = { doc, ajv, routes, validators: new Map(), webhooks };
  return live;
}

/**
 * The first correction made to the live document: it defines deposit-instruction schemas for 46
 * account types (`PaymentKesAccountInfo` with `accountType: KES_ACCOUNT`, …), but their shared base
 * types `accountType` with `PaymentAccountType`, an enum that lists only 29 of them — so the KES,
 * ZAR, AED … instructions it defines could never validate. The enum is widened to the account types
 * the instruction schemas themselves name (docs/decisions.md, "Wire fidelity").
 */
function widenPaymentAccountType(doc: Json): void {
  const schemas = doc.components?.schemas ?? {};
  const base: Json = schemas.PaymentAccountType;
  const variants: Json[] = schemas.PaymentInstructions?.properties?.accountOrWalletInfo?.oneOf ?? [];
  if (!Array.isArray(base?.enum)) return;
  const named = (node: Json): unknown[] => {
    const n = resolveRef(doc, node);
    const own = n?.properties?.accountType?.enum;
    return [...(Array.isArray(own) ? own : []), ...(n?.allOf ?? []).flatMap(named)];
  };
  for (const value of variants.flatMap(named)) if (!base.enum.includes(value)) base.enum.push(value);
}

/**
 * The other correction: the live `WebhookType` enum lists `VERIFICATION.READY_FOR_VERIFICATION`, but
 * `VerificationWebhook`'s `type` enum does not. A type the `WebhookType` enum lists is added to the
 * webhook schema whose types share its prefix (`VERIFICATION.`), so that event is checked too.
 */
function widenWebhookTypes(doc: Json): void {
  const schemas = doc.components?.schemas ?? {};
  const all: unknown = schemas.WebhookType?.enum;
  if (!Array.isArray(all)) return;
  const enums: string[][] = Object.values<Json>(schemas).flatMap((schema) =>
    (schema?.allOf ?? []).map((part: Json) => part?.properties?.type?.enum).filter((e: unknown): e is string[] => Array.isArray(e)),
  );
  for (const type of all as string[]) {
    if (enums.some((e) => e.includes(type))) continue;
    const prefix = type.slice(0, type.indexOf('.') + 1);
    enums.find((e) => e.every((t) => t.startsWith(prefix)))?.push(type);
  }
}

/**
 * The third: the live card operations and guides answer 400 `FUNDING_SOURCE_INELIGIBLE`
 * (createCard, updateCardById), but the `Error400` code enum lacks it. It is added, so those answers
 * are checked like any other (docs/cards.md).
 */
function widenError400(doc: Json): void {
  const code: Json = doc.components?.schemas?.Error400?.properties?.code;
  if (Array.isArray(code?.enum) && !code.enum.includes('FUNDING_SOURCE_INELIGIBLE')) code.enum.push('FUNDING_SOURCE_INELIGIBLE');
}

function resolveRef(doc: Json, node: Json): Json {
  let n = node;
  while (n?.$ref && typeof n.$ref === 'string' && n.$ref.startsWith('#/')) {
    n = n.$ref
      .slice(2)
      .split('/')
      .map((s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((o: Json, k: string) => o?.[k], doc);
  }
  return n;
}

/** The live operation a request path answers to, as `METHOD /template`, or undefined. */
export function liveOperation(method: string, pathname: string): { method: string; template: string } | undefined {
  const l = load();
  const m = method.toLowerCase();
  const p = pathname.startsWith(BASE_PATH) ? pathname.slice(BASE_PATH.length) : undefined;
  if (p === undefined) return undefined;
  const r = l.routes.find((x) => x.method === m && x.pattern.test(p));
  return r ? { method: m, template: r.template } : undefined;
}

function validatorFor(op: { method: string; template: string }, status: number): ValidateFunction | null {
  const l = load();
  const key = `${op.method} ${op.template} ${status}`;
  const cached = l.validators.get(key);
  if (cached !== undefined) return cached;
  const responses = l.doc.paths[op.template][op.method].responses ?? {};
  const declared =
    String(status) in responses ? String(status) : `${String(status)[0]}XX` in responses ? `${String(status)[0]}XX` : undefined;
  let fn: ValidateFunction | null = null;
  if (declared) {
    const response = resolveRef(l.doc, responses[declared]);
    if (response?.content?.['application/json']?.schema) {
      // Through the response's own pointer when it is inline, else through the shared response's.
      const base = responses[declared].$ref
        ? `live${responses[declared].$ref}`
        : `live${pointer('paths', op.template, op.method, 'responses', declared)}`;
      fn = l.ajv.compile({ $ref: `${base}/content/application~1json/schema` });
    }
  }
  l.validators.set(key, fn);
  return fn;
}

/** Report mode: appends what was checked since the last call to `<report>.checked` (each test file's afterAll). */
export function writeCheckedReport(): void {
  const report = process.env.CORRIDOR_CONFORMANCE_REPORT;
  if (conformanceMode() !== 'report' || !report) return;
  for (const [k, n] of checked) fs.appendFileSync(`${report}.checked`, `${n}\t${k}\n`);
  checked.clear();
}

export type ConformanceMode = 'fail' | 'report' | 'off';

export function conformanceMode(): ConformanceMode {
  const v = process.env.CORRIDOR_CONFORMANCE;
  return v === 'off' || v === 'report' ? v : 'fail';
}

function describeErrors(fn: ValidateFunction): string {
  return (fn.errors ?? [])
    .slice(0, 8)
    .map((e) => `  ${e.instancePath || '(root)'} ${e.message ?? ''} ${JSON.stringify(e.params)} [${e.schemaPath}]`)
    .join('\n');
}

function violation(what: string, fn: ValidateFunction, body: unknown): void {
  const text = `live-schema violation: ${what}\n${describeErrors(fn)}\n  body: ${JSON.stringify(body).slice(0, 1500)}`;
  if (conformanceMode() === 'report') {
    const file = process.env.CORRIDOR_CONFORMANCE_REPORT;
    if (file)
      fs.appendFileSync(file, `${JSON.stringify({ what, errors: fn.errors?.slice(0, 8), body: JSON.stringify(body).slice(0, 600) })}\n`);
    return;
  }
  throw new Error(text);
}

/**
 * Checks made while deferring, run by `flushChecks`. Suites that watch the event loop of an
 * in-process server (the workload) defer: compiling a validator inside a step would be blamed on
 * the step's requests.
 */
let deferred: (() => void)[] | undefined;

export function deferChecks(on: boolean): void {
  deferred = on ? (deferred ?? []) : undefined;
}

/** Runs the deferred checks; throws every violation found (webhooks' included). */
export function flushChecks(): void {
  const pending = deferred?.splice(0) ?? [];
  const found: string[] = [];
  for (const check of pending) {
    try {
      check();
    } catch (err) {
      found.push((err as Error).message);
    }
  }
  found.push(...takeWebhookViolations());
  if (found.length > 0) throw new Error(found.join('\n\n'));
}

/** Checks one response (see the module comment); throws on a violation unless reporting. */
export function checkResponse(method: string, url: string, status: number, contentType: string | null, body: unknown): void {
  if (conformanceMode() === 'off' || !contentType?.includes('application/json')) return;
  if (deferred) deferred.push(() => checkResponseNow(method, url, status, body));
  else checkResponseNow(method, url, status, body);
}

/** What this process checked: by `METHOD /template status`, and webhooks by type. */
export const checked = new Map<string, number>();
const count = (key: string) => checked.set(key, (checked.get(key) ?? 0) + 1);

function checkResponseNow(method: string, url: string, status: number, body: unknown): void {
  let pathname: string;
  try {
    // Hostile paths (the fuzzer's) may not parse: then there is no operation to check against.
    pathname = decodeURI(new URL(url, 'http://corridor.invalid').pathname);
  } catch {
    return;
  }
  const op = liveOperation(method, pathname);
  if (!op) return;
  const fn = validatorFor(op, status);
  if (!fn) return;
  count(`${op.method.toUpperCase()} ${op.template} ${status}`);
  const mapped = toLiveNames(body);
  if (!fn(mapped)) violation(`${op.method.toUpperCase()} ${op.template} → ${status}`, fn, mapped);
}

/** Validates `value` against the live document's `components.schemas[name]` (renames mapped); throws on a violation. */
export function checkComponent(name: string, value: unknown): void {
  const l = load();
  const key = `component ${name}`;
  let fn = l.validators.get(key);
  if (fn === undefined) {
    fn = l.ajv.compile({ $ref: `live#/components/schemas/${name}` });
    l.validators.set(key, fn);
  }
  const mapped = toLiveNames(value);
  if (fn && !fn(mapped))
    throw new Error(`live-schema violation: ${name}\n${describeErrors(fn)}\n  value: ${JSON.stringify(mapped).slice(0, 1500)}`);
}

/** Webhook violations seen since the last `takeWebhookViolations` (a receiver cannot throw into a test). */
const webhookViolations: string[] = [];

/**
 * For receivers: checks a webhook body as it arrives and keeps any violation for the running test,
 * which fails when it ends (conformance.setup.ts).
 */
export function noteWebhook(body: unknown): void {
  if (deferred) {
    deferred.push(() => checkWebhook(body));
    return;
  }
  try {
    checkWebhook(body);
  } catch (err) {
    webhookViolations.push((err as Error).message);
  }
}

export function takeWebhookViolations(): string[] {
  return webhookViolations.splice(0);
}

/** Checks one webhook body (by its `type`); throws on a violation unless reporting. */
export function checkWebhook(body: unknown): void {
  if (conformanceMode() === 'off' || body === null || typeof body !== 'object') return;
  const l = load();
  const type = (body as { type?: unknown }).type;
  const ref = typeof type === 'string' ? l.webhooks.get(type) : undefined;
  if (!ref) return;
  const key = `webhook ${ref}`;
  let fn = l.validators.get(key);
  if (fn === undefined) {
    fn = l.ajv.compile({ $ref: ref });
    l.validators.set(key, fn);
  }
  count(`webhook ${String(type)}`);
  const mapped = toLiveNames(body);
  if (fn && !fn(mapped)) violation(`webhook ${String(type)}`, fn, mapped);
}
