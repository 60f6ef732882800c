/**
 * `accountInfo`: the request and response schemas (a oneOf discriminated on `accountType`, built
 * from the variant tables) and the checks a schema cannot express (check digits, PIX keys by type,
 * which rails the given fields support, the currency each variant holds). Also the account's
 * primary identifier, its sandbox suffix, and the key duplicate detection compares.
 *
 * Request branches accept the canonical name and its aliases and are closed (an unknown field at
 * any depth is a 400 naming it); response branches carry the canonical name only, add
 * `paymentRails` to bank accounts, and drop the string constraints (patterns, lengths, formats) so
 * that a stored account always serialises even if a rule is tightened later.
 */
import { Type, type TProperties, type TSchema } from '@sinclair/typebox';
import { errors, type FieldError } from '../../http/errors.ts';
import { Obj } from '../../http/schemas.ts';
import { CRYPTO_CODES, CURRENCY_CODES, findCurrency } from '../../lib/currencies.ts';
import { beneficiaryUnion, individualBeneficiary, WalletBeneficiarySchema } from './beneficiary.ts';
import { ibanProblem, isValidClabe, isValidCnpj, isValidCpf } from './checksums.ts';
import { FIAT_VARIANTS, type FiatVariant } from './fiat-variants.ts';
import { LIGHTNING, WALLET_VARIANTS, type WalletVariant } from './wallet-variants.ts';

/** An accountInfo object as it travels: `accountType` plus the variant's fields. */
export type AccountInfo = { accountType: string } & Record<string, unknown>;

/** A string enum as `{type: string, enum}` (one clear error, unlike a union of literals). */
export function StrEnum<T extends string>(values: readonly T[], opts: Record<string, unknown> = {}) {
  return Type.Unsafe<T>({ type: 'string', enum: [...values], ...opts });
}

type Kind = 'FIAT' | 'WALLET' | 'LIGHTNING';

interface Variant {
  accountType: string;
  /** Every name accepted on input: the canonical one first, then aliases. */
  names: string[];
  kind: Kind;
  currencies: readonly string[];
  fiat?: FiatVariant;
  wallet?: WalletVariant;
  create: TSchema;
  response: TSchema;
}

const FIAT_CURRENCIES = CURRENCY_CODES.filter((c) => !CRYPTO_CODES.has(c));

/** A copy of a schema without string constraints, for response serialisation (see file header). */
function relax(schema: TSchema): TSchema {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        if (k === 'pattern' || k === 'format' || k === 'minLength' || k === 'maxLength' || k === 'examples') continue;
        out[k] = strip(x);
      }
      return out;
    }
    return v;
  };
  return Type.Unsafe(strip(JSON.parse(JSON.stringify(schema))) as object);
}

const tag = (names: string[]) =>
  names.length === 1
    ? Type.Literal(names[0]!)
    : StrEnum(names, { description: `${names[0]} (also accepted: ${names.slice(1).join(', ')})` });

function fiatVariant(v: FiatVariant): Variant {
  const names = [v.accountType, ...(v.aliases ?? [])];
  const fields: TProperties = {};
  for (const [f, s] of Object.entries(v.fields)) fields[f] = v.required.includes(f) ? s : Type.Optional(s);
  const ccy = v.currency ? v.currency.charAt(0) + v.currency.slice(1).toLowerCase() : 'Swift';
  const beneficiary = beneficiaryUnion(individualBeneficiary(`${ccy}Beneficiary`, v.beneficiary), 'The account holder');
  // What the live clients send on create besides the fields (the SDK's types require them): Corridor,
  // as the live API, chooses the rails from the fields, so these are checked and not stored.
  const requested = {
    paymentRails: Type.Optional(
      Type.Array(StrEnum([...v.rails, ...(v.requestRails ?? [])]), {
        minItems: 1,
        uniqueItems: true,
        description: 'Rails the client has in mind; the account is offered the rails its fields support (see the response)',
      }),
    ),
    countries: Type.Optional(
      Type.Array(Type.String({ pattern: '^[A-Z]{2}$' }), {
        minItems: 1,
        maxItems: 50,
        uniqueItems: true,
        description: 'ISO 3166-1 alpha-2 countries of the account (accepted, not stored)',
      }),
    ),
  };
  const create = Obj({ accountType: tag(names), ...fields, ...requested, beneficiary }, { title: v.title });
  const response = relax(
    Obj(
      {
        accountType: Type.Literal(v.accountType),
        ...fields,
        paymentRails: Type.Array(StrEnum(v.rails), { description: 'Rails Corridor can pay this account over' }),
        beneficiary,
      },
      { title: v.title },
    ),
  );
  return {
    accountType: v.accountType,
    names,
    kind: 'FIAT',
    currencies: v.currency ? [v.currency] : FIAT_CURRENCIES,
    fiat: v,
    create,
    response,
  };
}

function walletVariant(w: WalletVariant): Variant {
  const names = [w.accountType, ...(w.aliases ?? [])];
  const fields = {
    address: Type.String({ minLength: 1, maxLength: 255, pattern: w.addressPattern, description: w.addressDescription }),
    beneficiary: Type.Optional(WalletBeneficiarySchema),
    vaspName: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: 'Custodian (exchange) holding the wallet; omit for self-custody' }),
    ),
  };
  return {
    accountType: w.accountType,
    names,
    kind: 'WALLET',
    currencies: w.currencies.filter((c) => findCurrency(c)),
    wallet: w,
    create: Obj({ accountType: tag(names), ...fields }, { title: w.title }),
    response: relax(Obj({ accountType: Type.Literal(w.accountType), ...fields }, { title: w.title })),
  };
}

function lightningVariant(): Variant {
  const names = [LIGHTNING.accountType, ...LIGHTNING.aliases];
  const fields = {
    invoice: Type.Optional(Type.String({ maxLength: 4096, pattern: LIGHTNING.invoicePattern, description: 'Single-use bolt11 invoice' })),
    bolt12: Type.Optional(Type.String({ maxLength: 4096, pattern: LIGHTNING.bolt12Pattern, description: 'Reusable bolt12 offer' })),
    lightningAddress: Type.Optional(
      Type.String({ maxLength: 255, pattern: LIGHTNING.lightningAddressPattern, description: 'Lightning address (name@domain)' }),
    ),
  };
  const description = 'Exactly one of invoice, bolt12 or lightningAddress';
  return {
    accountType: LIGHTNING.accountType,
    names,
    kind: 'LIGHTNING',
    currencies: LIGHTNING.currencies.filter((c) => findCurrency(c)),
    create: Obj({ accountType: tag(names), ...fields }, { title: LIGHTNING.title, description }),
    response: relax(Obj({ accountType: Type.Literal(LIGHTNING.accountType), ...fields }, { title: LIGHTNING.title, description })),
  };
}

/**
 * The variants Corridor offers: bank accounts whose currency is in the currency catalogue (or any
 * fiat currency for SWIFT), wallets with at least one known asset, and Lightning.
 */
export const VARIANTS: Variant[] = [
  ...FIAT_VARIANTS.filter((v) => v.currency === undefined || findCurrency(v.currency)).map(fiatVariant),
  ...WALLET_VARIANTS.map(walletVariant),
  lightningVariant(),
].filter((v) => v.currencies.length > 0);

const BY_NAME = new Map<string, Variant>(VARIANTS.flatMap((v) => v.names.map((n) => [n, v] as const)));

/** Every accountType accepted on input (canonical names and aliases). */
export const ACCEPTED_ACCOUNT_TYPES: readonly string[] = [...BY_NAME.keys()];
/** The canonical accountType for an accepted name (aliases map to the spec's names). */
export function canonicalAccountType(name: string): string | undefined {
  return BY_NAME.get(name)?.accountType;
}

/** `Type.Unsafe`: Ajv's discriminator needs `oneOf`, and TypeBox unions are `anyOf`. */
export const AccountInfoCreateSchema = Type.Unsafe<AccountInfo>({
  title: 'ExternalAccountCreateInfoOneOf',
  description: 'Account or wallet details, by accountType',
  type: 'object',
  oneOf: VARIANTS.map((v) => v.create),
  discriminator: { propertyName: 'accountType' },
});

export const AccountInfoSchema = Type.Unsafe<AccountInfo>({
  title: 'ExternalAccountInfoOneOf',
  type: 'object',
  oneOf: VARIANTS.map((v) => v.response),
  discriminator: { propertyName: 'accountType' },
});

export interface CheckedAccountInfo {
  /** The accountInfo to store and emit: canonical accountType, `paymentRails` on bank accounts. */
  info: AccountInfo;
  /** The field holding the primary identifier, e.g. `iban`. */
  identifierField: string;
  /** The primary identifier's value: its last 3 digits steer the sandbox. */
  identifier: string;
  /** What makes two accounts of one owner the same account (duplicate detection). */
  identityKey: string;
}

const EMAIL = /^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$/;
const BR_PHONE = /^\+55[0-9]{10,11}$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

const str = (info: AccountInfo, f: string): string | undefined => (typeof info[f] === 'string' ? (info[f] as string) : undefined);

/**
 * Checks a schema-valid accountInfo against its currency and the rules a schema cannot state.
 * Throws 400 INVALID_CURRENCY (field `currency`) or INVALID_INPUT (fields `accountInfo.*`).
 */
export function checkAccountInfo(input: AccountInfo, currency: string): CheckedAccountInfo {
  const v = BY_NAME.get(input.accountType);
  if (!v) throw errors.invalidField('accountInfo.accountType', 'is not a supported value');
  if (!findCurrency(currency)) throw errors.invalidCurrency(currency, 'currency');
  if (!v.currencies.includes(currency)) {
    throw errors.invalidCurrencies([
      { field: 'currency', message: `${v.accountType} accounts hold ${v.currencies.join(', ')}, not ${currency}` },
    ]);
  }
  const errs: FieldError[] = [];
  const bad = (field: string, message: string) => errs.push({ field: `accountInfo.${field}`, message });
  // paymentRails and countries of a create request are the client's (see fiatVariant): not stored.
  const { accountType: _given, paymentRails: _rails, countries: _countries, ...rest } = input;
  const info: AccountInfo = { accountType: v.accountType, ...rest };
  let identifierField = '';

  if (v.fiat) {
    const f = v.fiat;
    const iban = str(input, 'iban');
    if (iban !== undefined) {
      const p = ibanProblem(iban);
      if (p) bad('iban', p);
    }
    const clabe = str(input, 'clabeNumber');
    if (clabe !== undefined && !isValidClabe(clabe)) bad('clabeNumber', 'has an invalid check digit (CLABE weights 3-7-1)');
    if (f.accountType === 'BRL_ACCOUNT') checkPix(input, bad);
    if (f.accountType === 'SWIFT_ACCOUNT' && iban === undefined && input.accountNumber === undefined) {
      bad('accountNumber', 'accountNumber or iban is required');
    }
    const rails = railsFor(f, input, bad);
    if (rails.length > 0) info.paymentRails = rails;
    identifierField = f.identifier.find((name) => str(input, name) !== undefined) ?? '';
  } else if (v.kind === 'LIGHTNING') {
    const present = LIGHTNING.fields.filter((name) => str(input, name) !== undefined);
    if (present.length === 0) bad('invoice', 'one of invoice, bolt12 or lightningAddress is required');
    for (const extra of present.slice(1)) bad(extra, `only one of invoice, bolt12 or lightningAddress may be given (${present[0]} is)`);
    identifierField = present[0] ?? '';
  } else {
    identifierField = 'address';
  }
  if (errs.length > 0) throw errors.invalidInput(`Invalid accountInfo: ${errs[0]!.field} ${errs[0]!.message}`, errs);

  const identifier = str(input, identifierField) ?? '';
  return { info, identifierField, identifier, identityKey: `${v.accountType}|${currency}|${identityOf(v, input, identifierField)}` };
}

function checkPix(input: AccountInfo, bad: (field: string, message: string) => void): void {
  const key = str(input, 'pixKey') ?? '';
  const type = str(input, 'pixKeyType');
  const ok =
    type === 'CPF'
      ? isValidCpf(key)
      : type === 'CNPJ'
        ? isValidCnpj(key)
        : type === 'EMAIL'
          ? EMAIL.test(key)
          : type === 'PHONE'
            ? BR_PHONE.test(key)
            : UUID.test(key);
  const expected: Record<string, string> = {
    CPF: 'a valid CPF (11 digits with check digits)',
    CNPJ: 'a valid CNPJ (14 digits with check digits)',
    EMAIL: 'an e-mail address',
    PHONE: 'a Brazilian phone number in E.164 (+55 and 10-11 digits)',
    RANDOM: 'a random key (UUID)',
  };
  if (!ok) bad('pixKey', `must be ${expected[type ?? 'RANDOM']} for pixKeyType ${type}`);
  const taxId = str(input, 'taxId') ?? '';
  const taxOk = taxId.length === 11 ? isValidCpf(taxId) : taxId.length === 14 ? isValidCnpj(taxId) : false;
  if (!taxOk) bad('taxId', 'must be a valid CPF (11 digits) or CNPJ (14 digits), check digits included');
}

/** The rails the given fields support, in the variant's order; records what is missing. */
function railsFor(f: FiatVariant, input: AccountInfo, bad: (field: string, message: string) => void): string[] {
  if (!f.railFields) return [...f.rails];
  const label = (rail: string) => (f.accountType === 'INR_ACCOUNT' && rail === 'NEFT' ? 'NEFT/RTGS' : rail);
  const offered = new Set<string>();
  let partial = false;
  for (const [rail, fields] of Object.entries(f.railFields)) {
    const missing = fields.filter((name) => input[name] === undefined);
    if (missing.length === 0) {
      // INR: the bank fields serve NEFT or RTGS, whichever `rail` names (any case).
      if (f.accountType === 'INR_ACCOUNT' && rail === 'NEFT') {
        const named = String(input.rail).toUpperCase();
        if (named === 'NEFT' || named === 'RTGS') offered.add(named);
        else {
          bad('rail', 'must be NEFT or RTGS');
          partial = true;
        }
      } else offered.add(rail);
    } else if (missing.length < fields.length) {
      partial = true;
      for (const name of missing) bad(name, `is required for the ${label(rail)} rail`);
    }
  }
  let reported = partial;
  const beneficiary = input.beneficiary as { beneficiaryType?: string } | undefined;
  if (f.accountType === 'CNY_ACCOUNT' && offered.has('BANK_TRANSFER') && beneficiary?.beneficiaryType !== 'BUSINESS') {
    offered.delete('BANK_TRANSFER');
    if (offered.size === 0) {
      bad('beneficiary.beneficiaryType', 'must be BUSINESS: CNY bank transfers are business-to-business only');
      reported = true;
    }
  }
  if (offered.size === 0 && !reported) {
    const options = Object.entries(f.railFields).map(([rail, fields]) => `${fields.join(' + ')} (${label(rail)})`);
    bad(Object.values(f.railFields)[0]![0]!, `is required: give ${options.join(' or ')}`);
  }
  return f.rails.filter((r) => offered.has(r));
}

function identityOf(v: Variant, input: AccountInfo, identifierField: string): string {
  if (v.fiat) {
    const fields = v.fiat.identity ?? v.fiat.identifier;
    return fields.map((name) => (str(input, name) ?? '').replace(/\s+/g, '').toUpperCase()).join('|');
  }
  const value = str(input, identifierField) ?? '';
  if (v.kind === 'LIGHTNING') return `${identifierField}:${value.toLowerCase()}`;
  return v.wallet?.caseInsensitive ? value.toLowerCase() : value;
}

/**
 * The sandbox suffix of a primary identifier: its last 3 characters when they are digits, taken
 * before any `@` (e-mail PIX keys, UPI vpa, lightning addresses); '' when it does not end in 3
 * digits (the "any other" row of every magic-value table).
 */
export function suffixOf(identifier: string): string {
  const at = identifier.indexOf('@');
  const local = at >= 0 ? identifier.slice(0, at) : identifier;
  return /[0-9]{3}$/.test(local) ? local.slice(-3) : '';
}
