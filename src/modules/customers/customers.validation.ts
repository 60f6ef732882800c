/**
 * Customer input rules beyond what the schema can say: UMA address shape, platform-supported
 * currencies, the End User Terms version, and cross-field rules of individual and business data.
 * Each check throws the API error the live API uses for it.
 */
import { type ApiError, errors, type FieldError } from '../../http/errors.ts';
import type { PlatformRow } from '../../store/schema.ts';
import { settingsOf } from '../platforms/platform-settings.ts';
import type { BusinessInfoUpdate, EndUserTermsConsent } from './customers.schemas.ts';
import type { CustomerData } from './customers.service.ts';

/** The End User Terms version Corridor knows, and where they are published. */
export const END_USER_TERMS = { version: 'V1', url: 'https://www.lightspark.com/legal/grid/enduserterms' } as const;

const UMA_RE = /^\$([a-z0-9\-_.+]+)@([a-z0-9.-]+)$/;
const UMA_USER_MAX = 64; // including the leading `$`

function invalidUma(message: string): ApiError {
  return errors.customerUmaAddressInvalid(message);
}

/** The canonical (lowercase) form of a platform-supplied UMA address, or 400 INVALID_UMA_ADDRESS. */
export function normalizeUmaAddress(input: string, umaDomain: string): string {
  const v = input.toLowerCase();
  const m = UMA_RE.exec(v);
  if (!m) throw invalidUma('must look like $username@domain, the username made of a-z 0-9 - _ . +');
  if (m[1]!.length + 1 > UMA_USER_MAX) throw invalidUma(`the $username part must be at most ${UMA_USER_MAX} characters`);
  if (m[2] !== umaDomain.toLowerCase()) throw invalidUma(`the domain must be the platform's umaDomain ${umaDomain}`);
  return v;
}

/** Every code must be one of the platform's supportedCurrencies: else 400 INVALID_CURRENCY per index. */
export function checkCurrencies(platform: PlatformRow, codes: string[]): void {
  const supported = new Set(settingsOf(platform).supportedCurrencies.map((c) => c.currencyCode));
  const unsupported = codes.map((code, i) => ({ code, i })).filter(({ code }) => !supported.has(code));
  if (unsupported.length === 0) return;
  const problems: FieldError[] = unsupported.map(({ code, i }) => ({
    field: `currencies.${i}`,
    message: `${code} is not a currency this platform supports`,
  }));
  throw errors.currenciesRejected(`Unsupported currency: ${unsupported.map((u) => u.code).join(', ')}`, problems);
}

/** Consent must name a terms version that exists: else 400 END_USER_TERMS_VERSION_NOT_FOUND. */
export function checkTermsVersion(consent: EndUserTermsConsent | undefined): void {
  if (consent && consent.termsVersion !== END_USER_TERMS.version) {
    throw errors.endUserTermsVersionNotFound(consent.termsVersion, END_USER_TERMS.version);
  }
}

const SSN_RE = /^\d{3}-\d{2}-\d{4}$/;

/** Cross-field rules of an individual's (merged) data; the schema already checked each field. */
export function individualProblems(d: CustomerData, today: string): FieldError[] {
  const out: FieldError[] = [];
  if (d.idType === 'EIN' || d.idType === 'NON_US_TAX_ID')
    out.push({ field: 'idType', message: 'only SSN or ITIN are accepted for individuals' });
  if (d.identifier !== undefined) {
    if (d.idType === undefined) out.push({ field: 'idType', message: 'is required with identifier' });
    else if (!SSN_RE.test(d.identifier))
      out.push({ field: 'identifier', message: 'must be formatted ###-##-####', constraint: { format: 'us-ssn' } });
    else if (d.idType === 'ITIN' && !d.identifier.startsWith('9')) out.push({ field: 'identifier', message: 'an ITIN starts with 9' });
    else if (d.idType === 'SSN' && d.identifier.startsWith('9'))
      out.push({ field: 'identifier', message: 'an SSN does not start with 9 (that is an ITIN)' });
  }
  if (d.countryOfIssuance !== undefined && d.countryOfIssuance !== 'US') {
    out.push({ field: 'countryOfIssuance', message: 'only US is accepted (SSN and ITIN are US-issued)' });
  }
  if (d.birthDate !== undefined && d.birthDate > today) out.push({ field: 'birthDate', message: 'must not be in the future' });
  if (d.sourceOfFundsCategories?.includes('OTHER') && d.sourceOfFundsOtherDescription === undefined) {
    out.push({ field: 'sourceOfFundsOtherDescription', message: 'is required when sourceOfFundsCategories contains OTHER' });
  }
  if (d.sourceOfWealthCategories?.includes('OTHER') && d.sourceOfWealthOtherDescription === undefined) {
    out.push({ field: 'sourceOfWealthOtherDescription', message: 'is required when sourceOfWealthCategories contains OTHER' });
  }
  if (d.purposeOfAccount === 'OTHER' && d.purposeOfAccountOtherDescription === undefined) {
    out.push({ field: 'purposeOfAccountOtherDescription', message: 'is required when purposeOfAccount is OTHER' });
  }
  return out;
}

/** Cross-field rules of a business's (merged) businessInfo. */
export function businessProblems(b: BusinessInfoUpdate | undefined, today: string): FieldError[] {
  const out: FieldError[] = [];
  if (!b) return out;
  if (b.incorporatedOn !== undefined && b.incorporatedOn > today)
    out.push({ field: 'businessInfo.incorporatedOn', message: 'must not be in the future' });
  // The US taxId of a business is its EIN: nine digits, usually written NN-NNNNNNN.
  if (b.country === 'US' && b.taxId !== undefined && !/^\d{2}-?\d{7}$/.test(b.taxId)) {
    out.push({ field: 'businessInfo.taxId', message: 'a US taxId is an EIN: 9 digits, as NN-NNNNNNN' });
  }
  if (b.sourceOfFundsCategories?.includes('OTHER') && b.sourceOfFundsOtherDescription === undefined) {
    out.push({ field: 'businessInfo.sourceOfFundsOtherDescription', message: 'is required when sourceOfFundsCategories contains OTHER' });
  }
  if (b.purposeOfAccount === 'OTHER' && b.purposeOfAccountOtherDescription === undefined) {
    out.push({ field: 'businessInfo.purposeOfAccountOtherDescription', message: 'is required when purposeOfAccount is OTHER' });
  }
  return out;
}

export function throwProblems(problems: FieldError[]): void {
  if (problems.length > 0) throw errors.invalidInput(`Invalid customer: ${problems[0]!.field} ${problems[0]!.message}`, problems);
}

/** Individuals with an id number get the default issuing country. */
export function withIssuanceDefault(d: CustomerData): CustomerData {
  return (d.idType !== undefined || d.identifier !== undefined) && d.countryOfIssuance === undefined
    ? { ...d, countryOfIssuance: 'US' }
    : d;
}
