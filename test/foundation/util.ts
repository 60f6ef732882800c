/** Small assertions shared by the foundation tests. */
import { expect } from 'vitest';
import { isCatalogued } from '../../src/http/errors.ts';
import type { Res } from '../helpers/http.ts';

/**
 * Asserts the response carries an x-request-id and, when it is an error, that its body has the
 * catalogue's shape: `status` equal to the HTTP status, a catalogued `code` and a `message`.
 */
export function checkEnvelope(res: Res): Res {
  expect(res.headers.get('x-request-id'), `x-request-id on ${res.status} ${res.text}`).toMatch(/^Request:[0-9a-f-]{36}$/);
  if (res.status >= 400) {
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body?.status, res.text).toBe(res.status);
    expect(typeof res.body?.code).toBe('string');
    expect(isCatalogued(res.status, res.body.code), `${res.status} ${res.body.code} is catalogued`).toBe(true);
    expect(typeof res.body?.message).toBe('string');
  }
  return res;
}

/** The `details.errors[].field` values of a 400. */
export function fieldsOf(res: Res): string[] {
  const errs = res.body?.details?.errors;
  if (!Array.isArray(errs)) throw new Error(`no details.errors in ${res.status} ${res.text}`);
  return errs.map((e: { field: string }) => e.field);
}

/** Asserts a 400 INVALID_INPUT naming `field` (among possibly others). */
export function expectFieldError(res: Res, field: string, code = 'INVALID_INPUT'): Res {
  if (res.status !== 400 || res.body?.code !== code) throw new Error(`expected 400 ${code} on ${field}, got ${res.status} ${res.text}`);
  expect(fieldsOf(res)).toContain(field);
  return checkEnvelope(res);
}

/** A controllable clock for deterministic timestamps. */
export function manualClock(startIso = '2030-01-01T00:00:00.000Z') {
  let now = Date.parse(startIso);
  return {
    nowMs: () => now,
    advance(ms: number) {
      now += ms;
    },
    iso: () => new Date(now).toISOString(),
  };
}
