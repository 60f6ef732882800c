/**
 * Schemas shared by many routes. Every object schema is closed (`additionalProperties: false`), so
 * an unknown field at any depth is a 400 naming it.
 */
import { ERROR_CATALOGUE } from './errors.ts';
import { Type, type ObjectOptions, type Static, type TObject, type TProperties, type TSchema, type TUnsafe } from '@sinclair/typebox';

/** A closed object: unknown properties are rejected. */
export function Obj<T extends TProperties>(properties: T, options: ObjectOptions = {}): TObject<T> {
  return Type.Object(properties, { additionalProperties: false, ...options });
}

/** Schema for `<Type>:<uuid>` ids in paths and bodies (loose on the uuid part: 404, not 400, for unknown ids). */
export const IdString = (example: string) => Type.String({ minLength: 1, maxLength: 200, examples: [example] });

/** Largest amount accepted anywhere (2^53−1, the largest integer JSON numbers carry exactly). */
export const MAX_AMOUNT = Number.MAX_SAFE_INTEGER;
export const Amount = (description: string) => Type.Integer({ minimum: 0, maximum: MAX_AMOUNT, description });

export const CurrencyCode = Type.String({
  pattern: '^[A-Z0-9]{3,5}$',
  description: 'Currency code (ISO 4217 or asset ticker)',
  examples: ['USD'],
});

export const DateTime = Type.String({ format: 'date-time' });

export const ErrorSchema = Obj(
  {
    status: Type.Integer({ description: 'Equals the HTTP status' }),
    code: Type.String({ description: 'Error code from the catalogue for this status' }),
    message: Type.String(),
    details: Type.Optional(Type.Object({}, { additionalProperties: true })),
    reason: Type.Optional(Type.String({ description: 'Wallet-auth failures: the check that failed' })),
  },
  { title: 'Error' },
);

export const CurrencySchema = Obj(
  {
    code: Type.String(),
    name: Type.String(),
    symbol: Type.String(),
    decimals: Type.Integer({ minimum: 0 }),
  },
  { title: 'Currency' },
);

export const CurrencyAmountSchema = Obj(
  {
    amount: Type.Integer({ description: 'In the smallest unit of the currency' }),
    currency: CurrencySchema,
  },
  { title: 'CurrencyAmount' },
);

/** Cursor pagination query fields shared by every paginated list. */
export const PageQueryFields = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size (1-100)' })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'Opaque cursor from the previous page' })),
};

/** The paginated list envelope around items of schema T. */
export function Page<T extends TSchema>(item: T, title: string) {
  return Obj(
    {
      data: Type.Array(item),
      hasMore: Type.Boolean(),
      nextCursor: Type.Optional(Type.String()),
      totalCount: Type.Optional(Type.Integer({ minimum: 0 })),
    },
    { title },
  );
}

/** The error body of one status: `status` is that status and `code` one of its catalogue's codes (as the live schema's Error<status>). */
function errorSchemaFor(status: number): typeof ErrorSchema {
  const codes = (ERROR_CATALOGUE as Record<number, readonly string[]>)[status];
  if (!codes) return ErrorSchema;
  return Obj(
    {
      status: Type.Integer({ enum: [status], description: 'Equals the HTTP status' }),
      code: Type.Unsafe<string>({ type: 'string', enum: [...codes], description: `Error code from the catalogue for ${status}` }),
      message: Type.String(),
      details: Type.Optional(Type.Object({}, { additionalProperties: true })),
      reason: Type.Optional(Type.String({ description: 'Wallet-auth failures: the check that failed' })),
    },
    { title: `Error${status}` },
  ) as unknown as typeof ErrorSchema;
}
const ERROR_SCHEMAS = new Map<number, typeof ErrorSchema>();

/** Error responses for the given statuses, for route schemas (and so the OpenAPI document). */
export function errorResponses(...statuses: number[]): Record<number, typeof ErrorSchema> {
  const out: Record<number, typeof ErrorSchema> = {};
  for (const s of [...statuses, 500]) {
    const schema = ERROR_SCHEMAS.get(s) ?? errorSchemaFor(s);
    ERROR_SCHEMAS.set(s, schema);
    out[s] = schema;
  }
  return out;
}

/**
 * A `oneOf` of closed objects told apart by one property (Ajv's `discriminator`): a wrong or
 * missing discriminator is one clear error, and each variant's fields are checked on their own.
 */
export function OneOf<T extends TObject[]>(
  variants: [...T],
  propertyName: string,
  options: { title?: string; description?: string } = {},
): TUnsafe<Static<T[number]>> {
  // `type: 'object'`: Ajv applies `discriminator` (which replaces `oneOf`) to objects only, so
  // without it null, a number, a string or an array would pass (found by the fuzzer, test/fuzz).
  return Type.Unsafe<Static<T[number]>>({ type: 'object', oneOf: variants, discriminator: { propertyName }, ...options });
}
