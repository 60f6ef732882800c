/**
 * docs/fixtures.schema.json is the schema POST /sandbox/fixtures validates with: regenerated from
 * the TypeBox schema and compared byte for byte (this test fails when they drift; regenerate with
 * `UPDATE_FIXTURE_SCHEMA=1 npx vitest run --project unit test/devtools/fixtures-schema.unit.test.ts`),
 * and a standard validator given the file agrees with the endpoint's schema on sample files.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { FixtureSchema, fixtureJsonSchema } from '../../src/modules/devtools/fixtures.schemas.ts';

// ajv-formats' default export, typed as the CommonJS module it is (as in src/http/validation.ts).
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/fixtures.schema.json');
const generated = `${JSON.stringify(fixtureJsonSchema(), null, 2)}\n`;

const ADDRESS = { line1: '1 Fixture Way', city: 'Austin', state: 'TX', postalCode: '73301', country: 'US' };
const good = {
  version: 1,
  customers: [
    {
      ref: 'alice',
      customer: { customerType: 'INDIVIDUAL', fullName: 'Alice Doe', birthDate: '1991-02-03', nationality: 'US', address: ADDRESS },
      balances: [{ currency: 'USD', amount: 100 }],
    },
  ],
  externalAccounts: [
    {
      customerRef: 'alice',
      currency: 'USD',
      accountInfo: {
        accountType: 'US_ACCOUNT',
        accountNumber: '4455667001',
        routingNumber: '021000021',
        bankAccountType: 'CHECKING',
        beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Alice Doe', address: ADDRESS },
      },
    },
  ],
};

describe('docs/fixtures.schema.json', () => {
  it('is generated from the schema the endpoint validates with', () => {
    if (process.env.UPDATE_FIXTURE_SCHEMA === '1') fs.writeFileSync(FILE, generated);
    expect(fs.readFileSync(FILE, 'utf8')).toBe(generated);
  });

  it('accepts and refuses what the endpoint does', () => {
    const compile = (schema: object) => {
      const ajv = new Ajv({ strict: false, allErrors: true });
      addFormats(ajv);
      return ajv.compile(schema);
    };
    const validate = compile(JSON.parse(fs.readFileSync(FILE, 'utf8')));
    const endpoint = compile(FixtureSchema);
    const bad = [
      { ...good, version: 2 },
      { ...good, extra: true },
      { ...good, customers: [{ ...good.customers[0], customer: { ...good.customers[0]!.customer, unknown: 1 } }] },
      { ...good, customers: [{ ...good.customers[0], balances: [{ currency: 'USD', amount: 0 }] }] },
      { version: 1, externalAccounts: [{ currency: 'USD', accountInfo: { accountType: 'NOPE' } }] },
    ];
    expect(endpoint(good)).toBe(true);
    expect(validate(good), JSON.stringify(validate.errors)).toBe(true);
    for (const b of bad) {
      expect(endpoint(b)).toBe(false);
      expect(validate(b)).toBe(false);
    }
  });
});
