import { beforeEach, describe, expect, it } from 'vitest';
import { AccessDenied, Conflict, InvalidRequest, NotFound } from '#shared/domain/errors.ts';
import type { CreatePaymethodCommand } from '#shared/domain/paymethods/create.ts';
import { createPaymethod } from '#shared/domain/paymethods/create.ts';
import { deletePaymethod } from '#shared/domain/paymethods/delete.ts';
import { mintOneTimeToken } from '#shared/domain/paymethods/one-time-tokens.ts';
import { getOneTimeToken } from '#shared/domain/paymethods/read.ts';
import { updatePaymethod } from '#shared/domain/paymethods/update.ts';
import { InMemoryVault, inMemoryPaymethodDeps } from '../support/in-memory-paymethods.ts';

const ORG = 'org_1';
const LOC = 'loc_1';
const CALLER = { organizationId: ORG, accessId: 'merchant' };
const CARD = { card_type: 'VISA', name_on_card: 'Ann Lee', account_number: '4111111111111111', expire_month: '07', expire_year: '31', card_verification_value: '123' };
const ECHECK = { account_holder: 'Ann Lee', account_number: '987654321012', routing_number: '021000021', account_type: 'Checking', sec_code: 'web' };
const PAYPAL = { vendor_type: 'paypal', vendor_billing_agreement_token: 'BA-8A802366G0648845U' };

let now: Date;
let deps: ReturnType<typeof inMemoryPaymethodDeps>;

beforeEach(() => {
  now = new Date('2026-06-15T12:00:00Z');
  deps = inMemoryPaymethodDeps(() => new Date(now));
});

/** Every call a second later, so records order newest first as in the store. */
function tick(): void {
  now = new Date(now.getTime() + 1000);
}

async function create(body: Record<string, unknown>, path: { customerToken?: string; locationId?: string } = {}) {
  tick();
  const command: CreatePaymethodCommand = path.customerToken
    ? { form: 'customer', caller: CALLER, organizationId: ORG, locationId: path.locationId ?? LOC, customerToken: path.customerToken, body }
    : { form: 'location', caller: CALLER, organizationId: ORG, locationId: path.locationId ?? LOC, body };
  return createPaymethod(command, deps);
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

async function fieldsOf(promise: Promise<unknown>): Promise<string[]> {
  const error = await failure(promise);
  if (!(error instanceof InvalidRequest)) throw error;
  return error.issues.map((issue) => issue.field);
}

describe('createPaymethod', () => {
  it('creates a clientless card at a location: parsed members stored, the number sealed to the record and never stored', async () => {
    const paymethod = await create({ label: 'Visa', card: { ...CARD, procurement_card: 'TRUE', customer_accounting_code: 'A1' } });
    expect(paymethod).toEqual({
      paymethod_token: expect.stringMatching(/^mth_[A-Za-z0-9]{22}$/),
      organization_id: ORG,
      location_id: LOC,
      label: 'Visa',
      paymethod_type: 'card',
      card: { card_type: 'visa', name_on_card: 'Ann Lee', last_4_account_number: '1111', masked_account_number: '****1111', expire_month: 7, expire_year: 2031, procurement_card: true, fingerprint: expect.stringMatching(/^fp_[A-Za-z0-9_-]{43}$/) },
      is_default: false,
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
      version: 1,
    });
    expect(deps.vault.sealed).toEqual([{ organizationId: ORG, recordToken: paymethod.paymethod_token }]);
    expect(InMemoryVault.plaintextOf(deps.paymethods.secretOf(paymethod.paymethod_token))).toBe('4111111111111111');
  });

  it('attaches a card to the path customer; the first becomes the default; a different body customer_token is 400', async () => {
    const first = await create({ card: CARD }, { customerToken: 'cst_a' });
    const second = await create({ card: CARD, customer_token: 'cst_a' }, { customerToken: 'cst_a' });
    expect([first.customer_token, first.is_default, second.is_default]).toEqual(['cst_a', true, false]);
    expect(await fieldsOf(create({ card: CARD, customer_token: 'cst_b' }, { customerToken: 'cst_a' }))).toEqual(['customer_token']);
  });

  it('creates an echeck with its members normalized', async () => {
    const paymethod = await create({ echeck: ECHECK, customer_token: 'cst_e' });
    expect(paymethod).toMatchObject({
      paymethod_type: 'echeck',
      customer_token: 'cst_e',
      is_default: true,
      echeck: { account_holder: 'Ann Lee', routing_number: '021000021', account_type: 'checking', sec_code: 'WEB', last_4_account_number: '1012', masked_account_number: '****1012' },
    });
    expect(InMemoryVault.plaintextOf(deps.paymethods.secretOf(paymethod.paymethod_token))).toBe('987654321012');
  });

  it('creates a PayPal paymethod (vendors alias) from the billing agreement; a refused token writes nothing', async () => {
    const paymethod = await create({ vendors: PAYPAL });
    expect(paymethod.vendor).toEqual({ ...PAYPAL, vendor_billing_agreement_id: 'B-8A802366G0648845U' });
    expect(deps.paymethods.secretOf(paymethod.paymethod_token)).toBeUndefined();
    expect(await fieldsOf(create({ vendor: { ...PAYPAL, vendor_billing_agreement_token: 'nope' } }))).toEqual(['vendor.vendor_billing_agreement_token']);
    expect(deps.paymethods.records.size).toBe(1);
  });

  it('creates locationless paymethods in the body organization, after checking the caller may act on it', async () => {
    const locationless = (body: Record<string, unknown>) => createPaymethod({ form: 'locationless', caller: CALLER, customerToken: 'cst_l', body }, deps);
    const paymethod = await locationless({ organization_id: ORG, card: CARD });
    expect(paymethod).toMatchObject({ organization_id: ORG, customer_token: 'cst_l', is_default: true });
    expect(paymethod).not.toHaveProperty('location_id');
    // Tenancy first: an organization the caller may not act on is 403 even with a bad body.
    expect(await failure(locationless({ organization_id: 'org_other', card: {} }))).toBeInstanceOf(AccessDenied);
    await deps.organizations.create({ organization_id: 'org_child', parent_organization_id: ORG, created_at: now.toISOString() });
    expect((await locationless({ organization_id: 'org_child', echeck: ECHECK })).organization_id).toBe('org_child');
    expect(await fieldsOf(locationless({ organization_id: ORG, card: { one_time_token: 'ott_x', name_on_card: 'A' } }))).toEqual(['card.one_time_token']);
  });

  it('writes nothing when a field fails, and reports every failing field', async () => {
    expect(await fieldsOf(create({ label: '', card: { ...CARD, card_type: 'amex', expire_month: 13 } }))).toEqual(['label', 'card.expire_month', 'card.card_type']);
    expect(deps.paymethods.records.size).toBe(0);
    expect(deps.vault.sealed).toEqual([]);
  });
});

describe('one-time tokens', () => {
  const mint = (body: Record<string, unknown>, locationId = LOC) => mintOneTimeToken({ organizationId: ORG, locationId, body }, deps);

  it('mints a 60-minute token for a full card, its number sealed to the token, without a fingerprint', async () => {
    const token = await mint({ card: CARD });
    expect(token).toEqual({
      one_time_token: expect.stringMatching(/^ott_[A-Za-z0-9]{22}$/),
      organization_id: ORG,
      location_id: LOC,
      paymethod_type: 'card',
      card: { card_type: 'visa', name_on_card: 'Ann Lee', last_4_account_number: '1111', masked_account_number: '****1111', expire_month: 7, expire_year: 2031 },
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + 60 * 60 * 1000).toISOString(),
    });
    expect(deps.vault.sealed).toEqual([{ organizationId: ORG, recordToken: token.one_time_token }]);
    expect(await fieldsOf(mint({ card: { ...CARD, card_type: 'jcb' } }))).toEqual(['card.card_type']);
    expect(await fieldsOf(mint({ card: { ...CARD, one_time_token: token.one_time_token } }))).toEqual(['card.one_time_token']);
  });

  it('creates a card from a token once: members beside it override, the number is re-sealed to the paymethod', async () => {
    const { one_time_token: token } = await mint({ card: CARD });
    const paymethod = await create({ card: { one_time_token: token, name_on_card: 'Other Name', expire_year: 2032 } }, { customerToken: 'cst_t' });
    expect(paymethod.card).toEqual({
      card_type: 'visa',
      name_on_card: 'Other Name',
      last_4_account_number: '1111',
      masked_account_number: '****1111',
      expire_month: 7,
      expire_year: 2032,
      one_time_token: token,
      // Computed by the create from the token's number: the token itself has none.
      fingerprint: (await deps.fingerprinter.fingerprint(ORG, { kind: 'card', accountNumber: '4111111111111111' })),
    });
    expect(InMemoryVault.plaintextOf(deps.paymethods.secretOf(paymethod.paymethod_token))).toBe('4111111111111111');
    expect(deps.oneTimeTokens.tokens.get(token)?.token.consumed_at).toBe(now.toISOString());
    const again = await failure(create({ card: { one_time_token: token, name_on_card: 'Again' } }));
    expect(again).toBeInstanceOf(Conflict);
  });

  it('creates an echeck from a token', async () => {
    const { one_time_token: token } = await mint({ echeck: ECHECK });
    const paymethod = await create({ echeck: { one_time_token: token, account_holder: 'Holder Two' } });
    expect(paymethod.echeck).toMatchObject({ account_holder: 'Holder Two', sec_code: 'WEB', last_4_account_number: '1012', one_time_token: token });
  });

  it('keeps the token when the create fails: missing name, number beside it, wrong kind, other location, past expiry', async () => {
    const { one_time_token: token } = await mint({ card: CARD });
    expect(await fieldsOf(create({ card: { one_time_token: token } }))).toEqual(['card.name_on_card']);
    expect(await fieldsOf(create({ card: { one_time_token: token, name_on_card: 'A', account_number: '4111111111111111' } }))).toEqual(['card.account_number']);
    expect(await fieldsOf(create({ echeck: { one_time_token: token, account_holder: 'A' } }))).toEqual(['echeck.one_time_token']);
    expect(await fieldsOf(create({ card: { one_time_token: token, name_on_card: 'A' } }, { locationId: 'loc_2' }))).toEqual(['card.one_time_token']);
    expect(await fieldsOf(create({ card: { one_time_token: token, name_on_card: 'A', expire_month: 1, expire_year: 2026 } }))).toEqual(['card.expire_year']);
    expect(deps.oneTimeTokens.tokens.get(token)?.token.consumed_at).toBeUndefined();
    expect(deps.paymethods.records.size).toBe(0);
  });

  it('reads a token back only where it was minted, while unused and unexpired; otherwise NotFound', async () => {
    const minted = await mint({ card: CARD });
    const read = (address: Partial<{ organizationId: string; locationId: string }> = {}) =>
      getOneTimeToken({ organizationId: ORG, locationId: LOC, oneTimeToken: minted.one_time_token, ...address }, deps);
    expect(await read()).toEqual(minted);
    expect(await failure(read({ locationId: 'loc_2' }))).toBeInstanceOf(NotFound);
    expect(await failure(read({ organizationId: 'org_2' }))).toBeInstanceOf(NotFound);
    expect(await failure(getOneTimeToken({ organizationId: ORG, locationId: LOC, oneTimeToken: 'ott_unknown' }, deps))).toBeInstanceOf(NotFound);
    await create({ card: { one_time_token: minted.one_time_token, name_on_card: 'Ann Lee' } });
    expect(await failure(read())).toBeInstanceOf(NotFound);

    const unused = await mint({ card: CARD });
    now = new Date(Date.parse(unused.expires_at));
    expect(await failure(getOneTimeToken({ organizationId: ORG, locationId: LOC, oneTimeToken: unused.one_time_token }, deps))).toBeInstanceOf(NotFound);
  });

  it('refuses an expired token', async () => {
    const { one_time_token: token } = await mint({ card: CARD });
    now = new Date(now.getTime() + 60 * 60 * 1000);
    const error = await failure(create({ card: { one_time_token: token, name_on_card: 'A' } }));
    expect(error).toBeInstanceOf(InvalidRequest);
    expect((error as InvalidRequest).code).toBe('INVALID_ONE_TIME_TOKEN');
  });
});

describe('updatePaymethod', () => {
  const address = (paymethodToken: string, locationId = LOC) => ({ organizationId: ORG, locationId, paymethodToken });

  it('changes only the members sent; the CVV is validated and dropped; one expiry part is checked against the stored other', async () => {
    const card = await create({ label: 'old', notes: 'keep', card: CARD });
    tick();
    const updated = await updatePaymethod(address(card.paymethod_token), { label: 'new', card: { expire_month: 1, card_verification_value: '999', procurement_card: 'false' } }, deps);
    expect(updated).toMatchObject({ label: 'new', notes: 'keep', version: 2, updated_at: now.toISOString() });
    expect(updated.card).toEqual({ ...card.card, expire_month: 1, procurement_card: false });
    expect((await deps.paymethods.get(card.paymethod_token))?.card).toEqual(updated.card);
    expect(await fieldsOf(updatePaymethod(address(card.paymethod_token), { card: { expire_year: 2026 } }, deps))).toEqual(['card.expire_year']);
  });

  it('refuses the account number, a sub-object of another kind, and an unknown paymethod', async () => {
    const card = await create({ card: CARD });
    const echeck = await create({ echeck: ECHECK });
    expect(await fieldsOf(updatePaymethod(address(card.paymethod_token), { card: { account_number: '4111111111111111' } }, deps))).toEqual(['card.account_number']);
    expect(await fieldsOf(updatePaymethod(address(card.paymethod_token), { echeck: { account_holder: 'A', routing_number: '021000021' } }, deps))).toEqual(['echeck']);
    expect(await fieldsOf(updatePaymethod(address(echeck.paymethod_token), { echeck: { item_description: 'x' } }, deps))).toEqual(['echeck.account_holder', 'echeck.routing_number']);
    expect((await updatePaymethod(address(echeck.paymethod_token), { echeck: { account_holder: 'B', routing_number: '011000015', sec_code: 'ppd' } }, deps)).echeck).toMatchObject({ account_holder: 'B', sec_code: 'PPD' });
    expect(await failure(updatePaymethod(address(card.paymethod_token, 'loc_2'), { label: 'x' }, deps))).toBeInstanceOf(NotFound);
  });

  it('moves a paymethod to another customer: it becomes that customer’s default if first, and the old customer keeps a default', async () => {
    const older = await create({ card: CARD }, { customerToken: 'cst_a' });
    const moving = await create({ card: CARD }, { customerToken: 'cst_a' });
    const moved = await updatePaymethod(address(older.paymethod_token), { customer_token: 'cst_b' }, deps);
    expect(moved).toMatchObject({ customer_token: 'cst_b', is_default: true });
    expect((await deps.paymethods.get(moving.paymethod_token))?.is_default).toBe(true);
  });
});

describe('deletePaymethod', () => {
  it('removes the record and its sealed number; the newest remaining paymethod becomes the default', async () => {
    const first = await create({ card: CARD }, { customerToken: 'cst_d' });
    const middle = await create({ card: CARD }, { customerToken: 'cst_d' });
    const newest = await create({ echeck: ECHECK }, { customerToken: 'cst_d' });
    expect(await deletePaymethod({ organizationId: ORG, locationId: LOC, paymethodToken: first.paymethod_token }, deps)).toEqual({ paymethod_token: first.paymethod_token });
    expect(deps.paymethods.records.has(first.paymethod_token)).toBe(false);
    expect((await deps.paymethods.get(newest.paymethod_token))?.is_default).toBe(true);
    expect((await deps.paymethods.get(middle.paymethod_token))?.is_default).toBe(false);
    expect(await failure(deletePaymethod({ organizationId: 'org_2', locationId: LOC, paymethodToken: middle.paymethod_token }, deps))).toBeInstanceOf(NotFound);
  });
});
