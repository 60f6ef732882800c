/**
 * Funding instructions for every currency of the catalogue (src/modules/internal-accounts/funding.ts):
 * each validates against the live `PaymentInstructions` schema, and the identifiers that carry check
 * digits (IBAN, CLABE, the PIX code's CRC) are valid.
 */
import { describe, expect, it } from 'vitest';
import { CURRENCY_CODES } from '../../src/lib/currencies.ts';
import { ibanProblem, isValidClabe } from '../../src/modules/external-accounts/checksums.ts';
import { fundingInstructions } from '../../src/modules/internal-accounts/funding.ts';
import { checkComponent } from '../helpers/conformance.ts';

const account = (currency: string) => ({
  id: `InternalAccount:019542f5-b3e7-7d02-8000-0000000000${currency.length}${currency}`,
  currency,
  funding_reference: 'REF-7Q2K9',
});

/** CRC-16/CCITT-FALSE of the PIX payload up to and including the CRC field's id and length. */
function pixCrcOk(code: string): boolean {
  let crc = 0xffff;
  for (const byte of Buffer.from(code.slice(0, -4), 'utf8')) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0') === code.slice(-4);
}

describe('funding instructions', () => {
  it('validate against the live PaymentInstructions schema for every currency, with rails on every bank account', () => {
    for (const code of CURRENCY_CODES) {
      const [instruction, ...rest] = fundingInstructions(account(code), 'Acme Platform', true);
      expect(rest, code).toEqual([]);
      expect(() => checkComponent('PaymentInstructions', instruction), code).not.toThrow();
      const info = instruction!.accountOrWalletInfo;
      if (info.accountType.endsWith('_ACCOUNT')) {
        expect(info.paymentRails, code).toEqual(expect.arrayContaining([expect.any(String)]));
        expect(info.reference, code).toBe('REF-7Q2K9');
      }
    }
  });

  it('carry valid check digits: IBANs, the CLABE, and the PIX code', () => {
    for (const code of ['EUR', 'DKK', 'AED', 'EGP', 'PKR']) {
      const iban = String(fundingInstructions(account(code), 'Acme', false)[0]!.accountOrWalletInfo.iban);
      expect(ibanProblem(iban), `${code} ${iban}`).toBeUndefined();
    }
    expect(isValidClabe(String(fundingInstructions(account('MXN'), 'Acme', false)[0]!.accountOrWalletInfo.clabeNumber))).toBe(true);
    const pix = String(fundingInstructions(account('BRL'), 'Acme', false)[0]!.accountOrWalletInfo.qrCode);
    expect(pix).toMatch(/^000201.*br\.gov\.bcb\.pix.*6304[0-9A-F]{4}$/);
    expect(pixCrcOk(pix)).toBe(true);
    // The standard check value of CRC-16/CCITT-FALSE, so the check above is the right CRC.
    expect(pixCrcOk('123456789' + '29B1')).toBe(true);
  });

  it('fail the live schema when a required field is missing (the check is not vacuous)', () => {
    const info = { ...fundingInstructions(account('GBP'), 'Acme', false)[0]!.accountOrWalletInfo };
    delete info.sortCode;
    expect(() => checkComponent('PaymentInstructions', { accountOrWalletInfo: info })).toThrow(/live-schema violation/);
  });
});
