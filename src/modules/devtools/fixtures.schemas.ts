/**
 * The fixture file: a declared set of customers, their internal account balances, external
 * accounts and the platform's own balances. `POST /sandbox/fixtures` validates with these schemas;
 * docs/fixtures.schema.json is generated from them (`fixtureJsonSchema`, checked by
 * test/devtools/fixtures-schema.unit.test.ts).
 */
import { type Static, Type } from '@sinclair/typebox';
import { CurrencyCode, Obj } from '../../http/schemas.ts';
import { CustomerCreateSchema } from '../customers/customers.schemas.ts';
import { AccountInfoCreateSchema } from '../external-accounts/account-info.ts';
import { OwnershipTypeSchema } from '../external-accounts/external-accounts.schemas.ts';
import { MAX_SANDBOX_FUND } from '../sandbox/sandbox.routes.ts';

/** The per-load limit (fixtures.limits.ts says why): re-exported for the schema's `maxItems`. */
export { MAX_FIXTURE_ENTRIES } from './fixtures.limits.ts';
import { MAX_FIXTURE_ENTRIES } from './fixtures.limits.ts';

const Ref = Type.String({ minLength: 1, maxLength: 255, description: 'A name local to the file, for references between its entries' });

const BalanceSchema = Obj(
  {
    currency: CurrencyCode,
    amount: Type.Integer({
      minimum: 1,
      maximum: MAX_SANDBOX_FUND,
      description: 'Smallest unit of the currency, funded from the sandbox issuer',
    }),
  },
  { title: 'FixtureBalance' },
);

const FixtureCustomerSchema = Obj(
  {
    ref: Ref,
    customer: CustomerCreateSchema,
    balances: Type.Optional(
      Type.Array(BalanceSchema, {
        maxItems: 50,
        description:
          "Available balances of the customer's internal accounts, by currency (each currency must be one of customer.currencies)",
      }),
    ),
  },
  { title: 'FixtureCustomer', description: 'A customer as POST /customers takes it, with the balances of its internal accounts' },
);

const FixtureExternalAccountSchema = Obj(
  {
    ref: Type.Optional(Ref),
    customerRef: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: "The ref of the customer it belongs to; without it, the platform's own account",
      }),
    ),
    currency: CurrencyCode,
    platformAccountId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    ownershipType: Type.Optional(OwnershipTypeSchema),
    defaultUmaDepositAccount: Type.Optional(Type.Boolean()),
    accountInfo: AccountInfoCreateSchema,
  },
  { title: 'FixtureExternalAccount', description: 'An external account as POST /customers/external-accounts takes it' },
);

export const FixtureSchema = Obj(
  {
    $schema: Type.Optional(Type.String({ description: 'Ignored: lets an editor find docs/fixtures.schema.json' })),
    version: Type.Literal(1),
    customers: Type.Optional(Type.Array(FixtureCustomerSchema, { maxItems: MAX_FIXTURE_ENTRIES })),
    externalAccounts: Type.Optional(Type.Array(FixtureExternalAccountSchema, { maxItems: MAX_FIXTURE_ENTRIES })),
    platformBalances: Type.Optional(
      Type.Array(BalanceSchema, { maxItems: 50, description: "Available balances of the platform's own internal accounts, by currency" }),
    ),
  },
  {
    title: 'Fixture',
    description:
      'Customers, their balances, external accounts and platform balances, loaded by POST /sandbox/fixtures (corridor fixtures load) ' +
      `in one transaction (at most ${MAX_FIXTURE_ENTRIES} entries in all: customers, external accounts and balances) and written by ` +
      'GET /sandbox/fixtures (corridor fixtures export).',
  },
);
export type Fixture = Static<typeof FixtureSchema>;
export type FixtureCustomer = Static<typeof FixtureCustomerSchema>;
export type FixtureExternalAccount = Static<typeof FixtureExternalAccountSchema>;
export type FixtureBalance = Static<typeof BalanceSchema>;

const Created = Obj({ ref: Type.String(), id: Type.String() });

export const FixtureLoadResultSchema = Obj(
  {
    customers: Type.Array(Created, { description: 'Each customer ref and the id it got' }),
    externalAccounts: Type.Array(Obj({ ref: Type.Optional(Type.String()), id: Type.String() }), {
      description: 'Each external account (with its ref when the file gave one) and the id it got',
    }),
  },
  { title: 'FixtureLoadResult' },
);
export type FixtureLoadResult = Static<typeof FixtureLoadResultSchema>;

/**
 * docs/fixtures.schema.json: the schema the endpoint validates with, as plain JSON Schema. Each
 * titled sub-schema used more than once (an Address, a Beneficiary …) goes to `$defs` once and is
 * referenced, which keeps the file about a tenth of its inlined size.
 */
export function fixtureJsonSchema(): Record<string, unknown> {
  const plain = JSON.parse(JSON.stringify(FixtureSchema)) as Record<string, unknown>;
  const uses = new Map<string, number>();
  const visit = (v: unknown, fn: (o: Record<string, unknown>) => unknown): unknown => {
    if (Array.isArray(v)) return v.map((x) => visit(x, fn));
    if (v === null || typeof v !== 'object') return v;
    const o = v as Record<string, unknown>;
    const replaced = fn(o);
    if (replaced !== undefined) return replaced;
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, visit(x, fn)]));
  };
  visit(plain, (o) => {
    if (typeof o.title === 'string') uses.set(JSON.stringify(o), (uses.get(JSON.stringify(o)) ?? 0) + 1);
    return undefined;
  });
  const defs: Record<string, unknown> = {};
  const names = new Map<string, string>();
  const lift = (o: Record<string, unknown>): unknown => {
    const key = JSON.stringify(o);
    if (o === plain || typeof o.title !== 'string' || (uses.get(key) ?? 0) < 2) return undefined;
    let name = names.get(key);
    if (name === undefined) {
      name = o.title as string;
      for (let i = 2; name in defs; i++) name = `${o.title as string}${i}`;
      names.set(key, name);
      defs[name] = null; // reserved before its body is visited (its own titled parts are lifted too)
      defs[name] = Object.fromEntries(Object.entries(o).map(([k, x]) => [k, visit(x, lift)]));
    }
    return { $ref: `#/$defs/${name}` };
  };
  const body = visit(plain, lift) as Record<string, unknown>;
  return { $schema: 'http://json-schema.org/draft-07/schema#', $id: 'https://corridor.dev/fixtures.schema.json', ...body, $defs: defs };
}
