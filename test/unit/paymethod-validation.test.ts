import { describe, expect, it } from 'vitest';
import { InvalidRequest } from '#shared/domain/errors.ts';
import {
  createBodySchema,
  locationlessCreateBodySchema,
  oneTimeTokenSchema,
  parseBody,
  updateBodySchema,
} from '#shared/domain/paymethods/validation.ts';

const NOW = new Date('2026-06-15T12:00:00Z');

const validateCreate = (body: Record<string, unknown>, form: 'location' | 'locationless', now: Date) =>
  parseBody(form === 'locationless' ? locationlessCreateBodySchema : createBodySchema, body, now);
const validateUpdate = (body: Record<string, unknown>, now: Date) => parseBody(updateBodySchema, body, now);
const validateOneTimeToken = (body: Record<string, unknown>, now: Date) => parseBody(oneTimeTokenSchema, body, now);
const cardOf = (input: ReturnType<typeof validateCreate>) => (input.instrument === 'card' ? input.card : undefined);
const CARD = { card_type: 'VISA', name_on_card: 'Ann Lee', account_number: '4111111111111111', expire_month: '12', expire_year: 2030 };
const ECHECK = { account_holder: 'Ann Lee', account_number: '123456789', routing_number: '021000021', account_type: 'Checking', sec_code: 'web' };

function issues(run: () => unknown): Array<{ field: string; message: string }> {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidRequest) return [...error.issues];
    throw error;
  }
  throw new Error('expected InvalidRequest');
}

describe('create validation', () => {
  it('normalizes a valid card: lower-case type, integer expiry, boolean procurement flag, no CVV', () => {
    const input = validateCreate({ card: { ...CARD, procurement_card: 'TRUE', card_verification_value: '123', customer_accounting_code: 'A1' } }, 'location', NOW);
    expect(input).toEqual({
      instrument: 'card',
      card: { card_type: 'visa', name_on_card: 'Ann Lee', account_number: '4111111111111111', expire_month: 12, expire_year: 2030, procurement_card: true },
    });
    expect(cardOf(validateCreate({ card: { ...CARD, expire_month: '07', expire_year: '27' } }, 'location', NOW))).toMatchObject({ expire_month: 7, expire_year: 2027 });
    // Two digits mean 20yy as an integer too.
    expect(cardOf(validateCreate({ card: { ...CARD, expire_month: 7, expire_year: 27 } }, 'location', NOW))).toMatchObject({ expire_month: 7, expire_year: 2027 });
    for (const year of [100, 1999, 27.5, -1]) expect(issues(() => validateCreate({ card: { ...CARD, expire_year: year } }, 'location', NOW))[0]?.field, String(year)).toBe('card.expire_year');
  });

  it('normalizes an echeck: lower-case account type, upper-case SEC code', () => {
    expect(validateCreate({ echeck: ECHECK }, 'location', NOW)).toMatchObject({ instrument: 'echeck', echeck: { account_type: 'checking', sec_code: 'WEB' } });
  });

  it('reports every failing field with dotted paths', () => {
    const found = issues(() =>
      validateCreate(
        { label: 'x'.repeat(51), notes: 5, card: { card_type: 'visa', name_on_card: '', account_number: '4111-1111', expire_month: 13, expire_year: '2030', card_verification_value: '12' }, extra: 1 },
        'location',
        NOW,
      ),
    );
    expect(found).toEqual(
      expect.arrayContaining([
        { field: 'label', message: 'must be at most 50 characters' },
        { field: 'notes', message: 'must be a string' },
        { field: 'card.name_on_card', message: 'must not be empty' },
        { field: 'card.account_number', message: 'must contain digits only' },
        { field: 'card.expire_month', message: 'must be a month from 1 to 12' },
        { field: 'card.card_verification_value', message: 'must be 3 to 4 digits' },
        { field: 'extra', message: 'is not a recognized member' },
      ]),
    );
  });

  it('refuses a number failing Luhn, a past expiry and a bad routing number', () => {
    expect(issues(() => validateCreate({ card: { ...CARD, account_number: '4111111111111112' } }, 'location', NOW))).toEqual([
      { field: 'card.account_number', message: 'is not a valid card number' },
    ]);
    expect(issues(() => validateCreate({ card: { ...CARD, expire_month: 5, expire_year: 2026 } }, 'location', NOW))[0]?.field).toBe('card.expire_year');
    expect(cardOf(validateCreate({ card: { ...CARD, expire_month: 6, expire_year: 2026 } }, 'location', NOW))?.expire_month).toBe(6);
    expect(issues(() => validateCreate({ echeck: { ...ECHECK, routing_number: '123456789' } }, 'location', NOW))[0]?.field).toBe('echeck.routing_number');
  });

  it('refuses vendor and its alias vendors on update the same way: neither can change', () => {
    for (const member of ['vendor', 'vendors']) {
      expect(issues(() => validateUpdate({ [member]: { vendor_type: 'paypal' } }, NOW))).toEqual([{ field: `${member}.vendor_type`, message: 'cannot be changed by an update' }]);
    }
  });

  it('accepts vendors as the alias of vendor, not both', () => {
    const vendor = { vendor_type: 'paypal', vendor_billing_agreement_token: 'BA-8A802366G0648845U' };
    expect(validateCreate({ vendors: vendor }, 'location', NOW)).toEqual({ instrument: 'vendor', vendor });
    expect(issues(() => validateCreate({ vendors: vendor, vendor }, 'location', NOW))).toContainEqual({ field: 'vendors', message: 'must not be sent together with vendor' });
  });

  it('requires exactly one sub-object', () => {
    expect(issues(() => validateCreate({ label: 'x' }, 'location', NOW))[0]?.message).toMatch(/exactly one/);
    expect(issues(() => validateCreate({ card: CARD, echeck: ECHECK }, 'location', NOW))[0]?.message).toMatch(/only one/);
  });

  it('answers a sub-object that is no object with that alone, not with its members as missing', () => {
    for (const [member, value] of [['card', 'x'], ['card', []], ['echeck', 5], ['vendor', true]] as const) {
      expect(issues(() => validateCreate({ [member]: value }, 'location', NOW)), `${member}: ${JSON.stringify(value)}`).toEqual([{ field: member, message: 'must be an object' }]);
    }
    expect(issues(() => validateUpdate({ echeck: 'x' }, NOW))).toEqual([{ field: 'echeck', message: 'must be an object' }]);
    // An object still gets every missing member named.
    expect(issues(() => validateCreate({ card: { card_type: 'visa' } }, 'location', NOW)).map((issue) => issue.field)).toEqual(['card.name_on_card', 'card.account_number', 'card.expire_month', 'card.expire_year']);
  });

  it('checks types: numbers where strings are expected and the reverse', () => {
    const found = issues(() => validateCreate({ card: { ...CARD, account_number: 4111111111111111, name_on_card: 7, suppress_account_updater: 'yes' } }, 'location', NOW));
    expect(found.map((issue) => issue.field).sort()).toEqual(['card.account_number', 'card.name_on_card', 'card.suppress_account_updater']);
  });

  it('refuses one-time tokens on the locationless form and numbers beside a token', () => {
    const found = issues(() => validateCreate({ organization_id: 'org_1', card: { one_time_token: 'ott_abc', account_number: '4111111111111111' } }, 'locationless', NOW));
    // name_on_card is required beside a token (the spec's field tables).
    expect(found.map((issue) => issue.field).sort()).toEqual(['card.account_number', 'card.name_on_card', 'card.one_time_token']);
  });

  it('requires name_on_card beside a card token and account_holder beside an echeck token', () => {
    expect(issues(() => validateCreate({ card: { one_time_token: 'ott_abc' } }, 'location', NOW))).toEqual([{ field: 'card.name_on_card', message: 'is required' }]);
    expect(issues(() => validateCreate({ echeck: { one_time_token: 'ott_abc', sec_code: 'PPD' } }, 'location', NOW))).toEqual([
      { field: 'echeck.account_holder', message: 'is required' },
    ]);
    expect(validateCreate({ card: { one_time_token: 'ott_abc', name_on_card: 'Ann Lee', expire_year: '31' } }, 'location', NOW)).toEqual({
      instrument: 'card_token',
      one_time_token: 'ott_abc',
      card: { name_on_card: 'Ann Lee', expire_year: 2031 },
    });
  });

  it('reports a card_type that disagrees with the number beside every other failing field', () => {
    const found = issues(() => validateCreate({ label: '', card: { ...CARD, card_type: 'amex', name_on_card: '' } }, 'location', NOW));
    expect(found).toEqual(
      expect.arrayContaining([
        { field: 'label', message: 'must not be empty' },
        { field: 'card.name_on_card', message: 'must not be empty' },
        { field: 'card.card_type', message: 'does not agree with the card number: an amex number starts with 34 or 37 and has 15 digits' },
      ]),
    );
    expect(found).toHaveLength(3);
    // The one-time token mint checks the brand too.
    expect(issues(() => validateOneTimeToken({ card: { ...CARD, card_type: 'mast' } }, NOW)).map((issue) => issue.field)).toEqual(['card.card_type']);
  });

  it('requires organization_id on the locationless form only', () => {
    expect(issues(() => validateCreate({ card: CARD }, 'locationless', NOW))).toContainEqual({ field: 'organization_id', message: 'is required' });
    expect(issues(() => validateCreate({ organization_id: 'org_1', card: CARD }, 'location', NOW))).toContainEqual({ field: 'organization_id', message: 'is not a recognized member' });
  });
});

describe('update validation', () => {
  it('refuses account_number and requires account_holder and routing_number on echeck updates', () => {
    expect(issues(() => validateUpdate({ card: { account_number: '4111111111111111' } }, NOW))).toEqual([{ field: 'card.account_number', message: 'cannot be changed by an update' }]);
    expect(issues(() => validateUpdate({ echeck: { item_description: 'x' } }, NOW)).map((issue) => issue.field).sort()).toEqual(['echeck.account_holder', 'echeck.routing_number']);
  });

  it('validates and drops the CVV of a card update', () => {
    expect(validateUpdate({ card: { expire_month: 1, expire_year: 2031, card_verification_value: '1234' } }, NOW)).toEqual({ card: { expire_month: 1, expire_year: 2031 } });
    expect(issues(() => validateUpdate({ card: { card_verification_value: 'abc' } }, NOW))[0]?.field).toBe('card.card_verification_value');
  });
});

describe('one-time token validation', () => {
  it('needs a full card or echeck', () => {
    expect(validateOneTimeToken({ card: CARD }, NOW)).toMatchObject({ instrument: 'card', card: { card_type: 'visa' } });
    expect(issues(() => validateOneTimeToken({ card: { name_on_card: 'x' } }, NOW)).map((issue) => issue.field)).toContain('card.account_number');
    expect(issues(() => validateOneTimeToken({ vendor: {} }, NOW)).map((issue) => issue.field)).toContain('vendor');
  });
});
