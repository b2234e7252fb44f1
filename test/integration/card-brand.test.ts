import { describe, expect, it } from 'vitest';
import { MERCHANT } from '../support/api.ts';
import { cardNumber } from '../support/card-numbers.ts';
import { CARD, errorsOf, locationPath, post, unique } from '../support/paymethods.ts';

const ORG = MERCHANT.organizationId;

/** Every brand's prefix ranges at their edges, and the prefixes just outside them (CONTRACT, "Card brand"). */
const BRANDS = [
  { type: 'visa', inside: ['4'], outside: ['3', '5'] },
  { type: 'mast', inside: ['51', '55', '2221', '2720'], outside: ['50', '56', '2220', '2721'] },
  { type: 'amex', inside: ['34', '37'], outside: ['33', '35', '38'], length: 15 },
  { type: 'disc', inside: ['6011', '644', '649', '65', '622126', '622925'], outside: ['6010', '643', '622125', '622926'] },
  { type: 'dine', inside: ['300', '305', '36', '38', '39'], outside: ['299', '306', '37'] },
  { type: 'jcb', inside: ['3528', '3589'], outside: ['3527', '3590'] },
] as const;

const cardOf = (type: string, accountNumber: string) => ({ ...CARD, card_type: type, account_number: accountNumber });

describe('card_type agrees with the number', () => {
  it.each(BRANDS)('$type: accepts the edges of its ranges and refuses the prefixes beside them', async ({ type, inside, outside, ...brand }) => {
    const length = 'length' in brand ? brand.length : 16;
    const paymethods = `${locationPath(ORG, unique('loc_'))}/paymethods`;
    for (const prefix of inside) {
      const answer = await post(paymethods, { card: cardOf(type.toUpperCase(), cardNumber(prefix, length)) });
      expect(answer.status, `${type} ${prefix}: ${answer.text}`).toBe(201);
      expect((answer.body.card as Record<string, unknown>).card_type).toBe(type);
    }
    for (const prefix of outside) {
      const answer = await post(paymethods, { card: cardOf(type, cardNumber(prefix, length)) });
      expect(answer.status, `${type} ${prefix}`).toBe(400);
      expect(errorsOf(answer)).toEqual([{ field: 'card.card_type', message: expect.stringMatching(/^does not agree with the card number: /) }]);
    }
  });

  it('an amex number has exactly 15 digits', async () => {
    const paymethods = `${locationPath(ORG, unique('loc_'))}/paymethods`;
    for (const length of [14, 16]) {
      const answer = await post(paymethods, { card: cardOf('amex', cardNumber('37', length)) });
      expect(errorsOf(answer), String(length)).toEqual([{ field: 'card.card_type', message: expect.stringMatching(/15 digits/) }]);
    }
  });

  it('reports a mismatch beside every other failing field, on create and on a one-time token mint', async () => {
    const loc = unique('loc_');
    const body = { label: '', card: { ...cardOf('amex', cardNumber('4', 16)), name_on_card: '', card_verification_value: '1' } };
    const created = await post(`${locationPath(ORG, loc)}/paymethods`, body);
    expect(created.status).toBe(400);
    expect(errorsOf(created).map((error) => error.field).sort()).toEqual(['card.card_type', 'card.card_verification_value', 'card.name_on_card', 'label']);
    const minted = await post(`${locationPath(ORG, loc)}/onetimetokens`, { card: { ...cardOf('jcb', cardNumber('5', 16)), expire_year: 2001 } });
    expect(minted.status).toBe(400);
    expect(errorsOf(minted).map((error) => error.field).sort()).toEqual(['card.card_type', 'card.expire_year']);
    // The locationless route checks it too.
    const locationless = await post(`/v3/customers/${unique('cst_')}/paymethods`, { organization_id: ORG, card: cardOf('disc', cardNumber('4', 16)) });
    expect(errorsOf(locationless)).toEqual([{ field: 'card.card_type', message: expect.stringMatching(/^does not agree/) }]);
  });
});
