/**
 * Check-digit algorithms for bank and tax identifiers: IBAN (ISO 13616 mod-97, with the registry's
 * per-country lengths), Mexican CLABE (weights 3-7-1), Brazilian CPF and CNPJ (mod-11).
 * Pure functions over strings; they say whether an identifier is well formed, nothing more.
 */

/** IBAN lengths by country (ISO 13616 registry); countries not listed get the checksum test only. */
const IBAN_LENGTHS: Record<string, number> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MR: 27,
  MT: 31,
  MU: 30,
  NL: 18,
  NO: 15,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  SA: 24,
  SC: 31,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
};

/** Why an IBAN is not valid, or undefined when it is (expects the compact form, no spaces). */
export function ibanProblem(iban: string): string | undefined {
  const s = iban.toUpperCase();
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$/.test(s)) return 'must be a country code, 2 check digits and 11-30 letters or digits';
  const expected = IBAN_LENGTHS[s.slice(0, 2)];
  if (expected !== undefined && s.length !== expected) return `must be ${expected} characters for country ${s.slice(0, 2)}`;
  // Move the first four characters to the end, letters to numbers (A=10 … Z=35), then mod 97 == 1.
  const rearranged = s.slice(4) + s.slice(0, 4);
  let rem = 0;
  for (const ch of rearranged) {
    const v = ch >= 'A' && ch <= 'Z' ? ch.charCodeAt(0) - 55 : ch.charCodeAt(0) - 48;
    rem = v >= 10 ? (rem * 100 + v) % 97 : (rem * 10 + v) % 97;
  }
  return rem === 1 ? undefined : 'has an invalid check digit (mod-97)';
}

/** The IBAN of `country` (2 letters) and `bban`, with its mod-97 check digits. */
export function ibanOf(country: string, bban: string): string {
  const rearranged = `${bban}${country}00`.toUpperCase();
  let rem = 0;
  for (const ch of rearranged) {
    const v = ch >= 'A' && ch <= 'Z' ? ch.charCodeAt(0) - 55 : ch.charCodeAt(0) - 48;
    rem = v >= 10 ? (rem * 100 + v) % 97 : (rem * 10 + v) % 97;
  }
  return `${country}${String(98 - rem).padStart(2, '0')}${bban}`;
}

/** The CLABE check digit of the first 17 digits (weights 3, 7, 1 repeating). */
export function clabeCheckDigit(first17: string): number {
  const weights = [3, 7, 1];
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += ((first17.charCodeAt(i) - 48) * weights[i % 3]!) % 10;
  return (10 - (sum % 10)) % 10;
}

/** True for 18 digits whose last digit is the CLABE check digit of the first 17. */
export function isValidClabe(clabe: string): boolean {
  return /^[0-9]{18}$/.test(clabe) && clabeCheckDigit(clabe.slice(0, 17)) === clabe.charCodeAt(17) - 48;
}

function mod11Digit(digits: string, weights: number[]): number {
  let sum = 0;
  for (let i = 0; i < weights.length; i++) sum += (digits.charCodeAt(i) - 48) * weights[i]!;
  const r = sum % 11;
  return r < 2 ? 0 : 11 - r;
}

/** Brazilian individual taxpayer id: 11 digits, the last two mod-11 check digits. */
export function isValidCpf(cpf: string): boolean {
  if (!/^[0-9]{11}$/.test(cpf)) return false;
  const d1 = mod11Digit(cpf, [10, 9, 8, 7, 6, 5, 4, 3, 2]);
  const d2 = mod11Digit(cpf, [11, 10, 9, 8, 7, 6, 5, 4, 3, 2]);
  return cpf.charCodeAt(9) - 48 === d1 && cpf.charCodeAt(10) - 48 === d2;
}

/** Brazilian company id: 14 digits, the last two mod-11 check digits. */
export function isValidCnpj(cnpj: string): boolean {
  if (!/^[0-9]{14}$/.test(cnpj)) return false;
  const d1 = mod11Digit(cnpj, [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
  const d2 = mod11Digit(cnpj, [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
  return cnpj.charCodeAt(12) - 48 === d1 && cnpj.charCodeAt(13) - 48 === d2;
}
