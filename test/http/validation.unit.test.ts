/**
 * Request validation of a wide discriminated union (src/http/validation.ts, `splitValidator`): the
 * external-account create body is validated branch by branch, and must accept and reject exactly
 * what Ajv's whole-schema validator does, with the same field errors.
 */
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { bodyValidator, fieldErrorsFrom } from '../../src/http/validation.ts';
import { ExternalAccountCreateSchema } from '../../src/modules/external-accounts/external-accounts.schemas.ts';
import { EXAMPLES } from '../external-accounts/util.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** Ajv as the server configures it for bodies, compiling the schema whole. */
function wholeValidator(schema: object) {
  const ajv = new Ajv({
    allErrors: true,
    removeAdditional: false,
    useDefaults: true,
    discriminator: true,
    strict: false,
    coerceTypes: false,
  });
  addFormats(ajv);
  return ajv.compile(schema);
}

const byField = (a: { field: string; message: string }, b: { field: string; message: string }) =>
  `${a.field} ${a.message}`.localeCompare(`${b.field} ${b.message}`);

/** Valid bodies for every account type, and broken ones of every kind the split handles itself. */
function bodies(): unknown[] {
  const out: unknown[] = [];
  for (const [type, ex] of Object.entries(EXAMPLES)) {
    const base = { customerId: 'Customer:1', currency: ex.currency };
    out.push({ ...base, accountInfo: ex.accountInfo }, { ...base, accountInfo: ex.invalid.accountInfo });
    out.push({ ...base, accountInfo: { ...ex.accountInfo, surprise: 1 } });
    out.push({ ...base, currency: 7, accountInfo: { ...ex.accountInfo, accountType: type.toLowerCase() } });
  }
  const info = EXAMPLES.US_ACCOUNT!.accountInfo;
  const { accountType: _drop, ...untagged } = info;
  out.push(
    { currency: 'USD', accountInfo: untagged },
    { currency: 'USD', accountInfo: { ...info, accountType: 12 } },
    { currency: 'USD', accountInfo: 'US_ACCOUNT' },
    { currency: 'USD', accountInfo: null },
    { currency: 'USD', accountInfo: [] },
    { currency: 'USD' },
    { currency: 'USD', accountInfo: info, extra: true },
    'not an object',
    null,
  );
  return out;
}

describe('a wide discriminated union in a request body', () => {
  it('validates branch by branch with the same outcome and field errors as the whole schema', () => {
    const split = bodyValidator(ExternalAccountCreateSchema);
    const whole = wholeValidator(ExternalAccountCreateSchema);
    const cases = bodies();
    expect(cases.length).toBeGreaterThan(150);
    let rejected = 0;
    for (const body of cases) {
      const a = structuredClone(body);
      const b = structuredClone(body);
      const ok = split(a);
      expect(ok, JSON.stringify(body)).toBe(whole(b));
      if (!ok) {
        rejected++;
        expect(fieldErrorsFrom(split.errors ?? []).sort(byField), JSON.stringify(body)).toEqual(
          fieldErrorsFrom(whole.errors ?? []).sort(byField),
        );
      }
      // Defaults are applied the same way (the validators fill them in place).
      expect(a).toEqual(b);
    }
    expect(rejected).toBeGreaterThan(100);
  });
});
