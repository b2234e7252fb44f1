import { describe, expect, it } from 'vitest';
import type { CARD_TYPES } from '#shared/domain/paymethods/rules.ts';
import { cardBrandMismatch, passesLuhn } from '#shared/domain/paymethods/rules.ts';
import { cardNumber } from '../support/card-numbers.ts';

/** Each brand's ranges with the prefixes just outside them (CONTRACT, "Card brand"). */
const EDGES: Record<(typeof CARD_TYPES)[number], { inside: string[]; outside: string[]; length?: number }> = {
  visa: { inside: ['4'], outside: ['3', '5'] },
  mast: { inside: ['51', '55', '2221', '2720'], outside: ['50', '56', '2220', '2721'] },
  amex: { inside: ['34', '37'], outside: ['33', '35', '36', '38'], length: 15 },
  disc: { inside: ['6011', '644', '649', '65', '622126', '622925'], outside: ['6010', '6012', '643', '64', '66', '622125', '622926'] },
  dine: { inside: ['300', '305', '36', '38', '39'], outside: ['299', '306', '35', '37'] },
  jcb: { inside: ['3528', '3589'], outside: ['3527', '3590'] },
};

describe('card brand', () => {
  for (const [type, { inside, outside, length = 16 }] of Object.entries(EDGES) as Array<[(typeof CARD_TYPES)[number], (typeof EDGES)['visa']]>) {
    it(`${type}: accepts ${inside.join(', ')} and refuses ${outside.join(', ')}`, () => {
      for (const prefix of inside) expect(cardBrandMismatch(type, cardNumber(prefix, length))).toBeUndefined();
      for (const prefix of outside) expect(cardBrandMismatch(type, cardNumber(prefix, length))).toMatch(/^does not agree with the card number/);
    });
  }

  it('amex needs exactly 15 digits', () => {
    expect(cardBrandMismatch('amex', cardNumber('37', 16))).toMatch(/15 digits/);
    expect(cardBrandMismatch('amex', cardNumber('37', 14))).toMatch(/15 digits/);
  });

  it('builds valid Luhn numbers for the tests', () => {
    expect(passesLuhn(cardNumber('622925', 16))).toBe(true);
    expect(cardNumber('37', 15)).toHaveLength(15);
  });
});
