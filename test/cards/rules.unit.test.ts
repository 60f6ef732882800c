/** The pure rules of cards: Luhn and the test ranges, the sandbox suffixes, the PATCH state machine. */
import { describe, expect, it } from 'vitest';
import {
  brandFor,
  descriptorMagic,
  expiryAt,
  fundingSourceMagic,
  isLuhnValid,
  luhnCheckDigit,
  newCvv,
  newPan,
  provisioningFor,
  stateChange,
  stateDecline,
} from '../../src/modules/cards/cards.rules.ts';
import { testRng } from '../helpers/random.ts';

const rng = testRng();
const bytes = { bytes: (n: number) => rng.bytes(n) };

describe('card numbers', () => {
  it('Luhn: known numbers pass, one changed digit fails', () => {
    for (const pan of ['4242424242424242', '4000056655665556', '5555555555554444', '378282246310005']) expect(isLuhnValid(pan)).toBe(true);
    expect(isLuhnValid('4242424242424241')).toBe(false);
    expect(isLuhnValid('4242-4242')).toBe(false);
    expect(luhnCheckDigit('7992739871')).toBe(3);
  });

  it('new numbers are 16 Luhn-valid digits in the brand’s test range; CVVs are 3 digits', () => {
    for (let i = 0; i < 200; i++) {
      const visa = newPan('VISA', bytes);
      const mc = newPan('MASTERCARD', bytes);
      expect(visa).toMatch(/^400000\d{10}$/);
      expect(mc).toMatch(/^555555\d{10}$/);
      expect(isLuhnValid(visa) && isLuhnValid(mc)).toBe(true);
      expect(newCvv(bytes)).toMatch(/^\d{3}$/);
    }
  });

  it('the brand is fixed by the card id; both brands occur', () => {
    const brands = new Set(Array.from({ length: 40 }, (_, i) => brandFor(`Card:${i}`)));
    expect(brands).toEqual(new Set(['VISA', 'MASTERCARD']));
    expect(brandFor('Card:x')).toBe(brandFor('Card:x'));
  });

  it('expires three years on, in the month of activation (UTC)', () => {
    expect(expiryAt(Date.parse('2031-12-31T23:59:59Z'))).toEqual({ expMonth: 12, expYear: 2034 });
    expect(expiryAt(Date.parse('2032-01-01T00:00:00Z'))).toEqual({ expMonth: 1, expYear: 2035 });
  });
});

describe('sandbox suffixes', () => {
  it('issuance, funding sources and descriptors', () => {
    expect(provisioningFor('card-001')).toEqual({ kind: 'NEVER' });
    expect(provisioningFor('card-002')).toEqual({ kind: 'REJECT', delayMs: 0 });
    expect(provisioningFor('card-005')).toEqual({ kind: 'ACTIVATE', delayMs: 30_000 });
    expect(provisioningFor('card-006')).toEqual({ kind: 'ACTIVATE', delayMs: 0 });
    expect(fundingSourceMagic('InternalAccount:x-002')).toBeDefined();
    expect(fundingSourceMagic('InternalAccount:x-003')).toBeDefined();
    expect(fundingSourceMagic('InternalAccount:x-004')).toBeUndefined();
    expect(['X-002', 'X-003', 'X-005', 'X-006', 'X-007'].map(descriptorMagic)).toEqual([
      'DECLINE_INSUFFICIENT_FUNDS',
      'DECLINE_CARD_PAUSED',
      'DELAYED_PULL',
      'PULL_FAILS',
      'NONE',
    ]);
  });
});

describe('the PATCH state machine', () => {
  it('ACTIVE ⇄ FROZEN, ACTIVE | FROZEN → CLOSED; the same state is no change; out of CLOSED or PROCESSING refused', () => {
    expect(stateChange('ACTIVE', 'FROZEN')).toEqual({ kind: 'change', to: 'FROZEN' });
    expect(stateChange('FROZEN', 'ACTIVE')).toEqual({ kind: 'change', to: 'ACTIVE' });
    expect(stateChange('FROZEN', 'CLOSED')).toEqual({ kind: 'change', to: 'CLOSED' });
    expect(stateChange('ACTIVE', 'ACTIVE')).toEqual({ kind: 'none' });
    expect(stateChange('CLOSED', 'CLOSED')).toEqual({ kind: 'refuse', code: 'CARD_ALREADY_CLOSED' });
    expect(stateChange('CLOSED', 'ACTIVE')).toEqual({ kind: 'refuse', code: 'INVALID_STATE_TRANSITION' });
    expect(stateChange('PROCESSING', 'ACTIVE')).toEqual({ kind: 'refuse', code: 'INVALID_STATE_TRANSITION' });
    expect(['ACTIVE', 'FROZEN', 'CLOSED', 'PROCESSING', 'PENDING_KYC'].map((s) => stateDecline(s as never))).toEqual([
      undefined,
      'CARD_PAUSED',
      'CARD_CLOSED',
      'CARD_NOT_ACTIVE',
      'CARD_NOT_ACTIVE',
    ]);
  });
});
