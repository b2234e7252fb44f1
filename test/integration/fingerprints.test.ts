import { describe, expect, it } from 'vitest';
import type { Identity } from '../support/api.ts';
import { call, MERCHANT, UNRELATED } from '../support/api.ts';
import { CARD, customerPath, ECHECK, expectError, locationPath, OTHER_CARD_NUMBER, post, resultsOf, unique } from '../support/paymethods.ts';
import { withLuhnDigit } from '../support/card-numbers.ts';

const ORG = MERCHANT.organizationId;
const OTHER_ORG = UNRELATED.organizationId;
const FINGERPRINT = /^fp_[A-Za-z0-9_-]{43}$/;

const fingerprintOf = (body: Record<string, unknown>) => ((body.card ?? body.echeck) as { fingerprint?: string }).fingerprint;
const byFingerprint = (fingerprint: string) => `?filter=${encodeURIComponent(`fingerprint eq '${fingerprint}'`)}`;

async function created(path: string, body: Record<string, unknown>, as: Identity = MERCHANT) {
  const answer = await post(path, body, { as });
  expect(answer.status, answer.text).toBe(201);
  return answer.body;
}

describe('fingerprints', () => {
  it('are equal for the same number within an organization, unrelated across organizations, different for another number', async () => {
    const loc = unique('loc_');
    const first = await created(`${locationPath(ORG, loc)}/paymethods`, { card: CARD });
    const again = await created(customerPath(ORG, unique('loc_'), unique('cst_')), { card: { ...CARD, card_type: 'visa', name_on_card: 'B' } });
    const otherNumber = await created(`${locationPath(ORG, loc)}/paymethods`, { card: { ...CARD, card_type: 'mast', account_number: OTHER_CARD_NUMBER } });
    const otherOrg = await created(`${locationPath(OTHER_ORG, loc)}/paymethods`, { card: CARD }, UNRELATED);
    expect(fingerprintOf(first)).toMatch(FINGERPRINT);
    expect(fingerprintOf(again)).toBe(fingerprintOf(first));
    expect(fingerprintOf(otherNumber)).not.toBe(fingerprintOf(first));
    expect(fingerprintOf(otherOrg)).toMatch(FINGERPRINT);
    expect(fingerprintOf(otherOrg)).not.toBe(fingerprintOf(first));
  });

  it('an echeck is the same account only with the same routing AND account number', async () => {
    const loc = unique('loc_');
    const path = `${locationPath(ORG, loc)}/paymethods`;
    const first = await created(path, { echeck: ECHECK });
    const same = await created(path, { echeck: { ...ECHECK, account_holder: 'Someone', sec_code: 'PPD' } });
    const otherRouting = await created(path, { echeck: { ...ECHECK, routing_number: '011000015' } });
    const otherAccount = await created(path, { echeck: { ...ECHECK, account_number: '123456789' } });
    const otherOrg = await created(`${locationPath(OTHER_ORG, loc)}/paymethods`, { echeck: ECHECK }, UNRELATED);
    expect(fingerprintOf(first)).toMatch(FINGERPRINT);
    expect(fingerprintOf(same)).toBe(fingerprintOf(first));
    for (const other of [otherRouting, otherAccount, otherOrg]) expect(fingerprintOf(other)).not.toBe(fingerprintOf(first));
  });

  it('appear on get and list answers, never on a one-time token, and a created-from-token paymethod has the same', async () => {
    const loc = unique('loc_');
    const card = await created(`${locationPath(ORG, loc)}/paymethods`, { card: CARD });
    const fingerprint = fingerprintOf(card)!;
    const got = await call(`${locationPath(ORG, loc)}/paymethods/${String(card.paymethod_token)}`);
    expect(fingerprintOf(got.body)).toBe(fingerprint);
    const listed = await call(`${locationPath(ORG, loc)}/paymethods`);
    expect(resultsOf(listed).map(fingerprintOf)).toEqual([fingerprint]);
    const minted = await post(`${locationPath(ORG, loc)}/onetimetokens`, { card: CARD });
    expect(minted.status, minted.text).toBe(201);
    expect(fingerprintOf(minted.body)).toBeUndefined();
    const fromToken = await created(`${locationPath(ORG, loc)}/paymethods`, { card: { one_time_token: minted.body.one_time_token, name_on_card: 'Ann Lee' } });
    expect(fingerprintOf(fromToken)).toBe(fingerprint);
  });

  it('filter the location and organization lists through their own key; another organization finds nothing', async () => {
    const loc = unique('loc_');
    const otherLoc = unique('loc_');
    const number = `4${String(Date.now()).padStart(14, '0')}`;
    const card = { ...CARD, account_number: withLuhnDigit(number) };
    const a = await created(`${locationPath(ORG, loc)}/paymethods`, { card });
    const b = await created(customerPath(ORG, otherLoc, unique('cst_')), { card });
    await created(`${locationPath(ORG, loc)}/paymethods`, { card: CARD });
    const theirs = await created(`${locationPath(OTHER_ORG, loc)}/paymethods`, { card }, UNRELATED);
    const fingerprint = fingerprintOf(a)!;

    const inLocation = await call(`${locationPath(ORG, loc)}/paymethods${byFingerprint(fingerprint)}`);
    expect(inLocation.status, inLocation.text).toBe(200);
    expect(resultsOf(inLocation).map((item) => item.paymethod_token)).toEqual([a.paymethod_token]);
    const inOrganization = await call(`/v3/organizations/${ORG}/paymethods${byFingerprint(fingerprint)}`);
    expect(resultsOf(inOrganization).map((item) => item.paymethod_token)).toEqual([b.paymethod_token, a.paymethod_token]);
    // The other organization's fingerprint of the same number, asked in this organization: nothing.
    const crossed = await call(`/v3/organizations/${ORG}/paymethods${byFingerprint(fingerprintOf(theirs)!)}`);
    expect(resultsOf(crossed)).toEqual([]);
    expectError(await call(`/v3/organizations/${ORG}/paymethods${byFingerprint('not-a-fingerprint')}`), 400, ['fingerprint']);
  });
});

describe('fail_on_duplicate', () => {
  it('refuses the customer\'s second create of the same card with 409 naming the first; false or absent still creates', async () => {
    const loc = unique('loc_');
    const path = customerPath(ORG, loc, unique('cst_'));
    const first = await created(path, { card: CARD });
    for (const flag of [true, 'true', 'TRUE']) {
      const refused = await post(path, { card: CARD, fail_on_duplicate: flag });
      expectError(refused, 409, ['card.account_number']);
      const response = (refused.body as { response: { response_code: string; response_desc: string } }).response;
      expect(response.response_code).toBe('DUPLICATE_PAYMETHOD');
      expect(response.response_desc).toContain(String(first.paymethod_token));
    }
    for (const flag of [false, 'false', undefined]) await created(path, { card: CARD, ...(flag === undefined ? {} : { fail_on_duplicate: flag }) });
    // Another customer, another number, or an echeck: not a duplicate.
    await created(customerPath(ORG, loc, unique('cst_')), { card: CARD, fail_on_duplicate: true });
    await created(path, { card: { ...CARD, card_type: 'mast', account_number: OTHER_CARD_NUMBER }, fail_on_duplicate: true });
    const echeck = await created(path, { echeck: ECHECK, fail_on_duplicate: 'true' });
    const refused = await post(path, { echeck: ECHECK, fail_on_duplicate: true });
    expectError(refused, 409, ['echeck.account_number']);
    expect(refused.text).toContain(String(echeck.paymethod_token));
    expectError(await post(path, { card: CARD, fail_on_duplicate: 'yes' }), 400, ['fail_on_duplicate']);
  });

  it('on a clientless create covers the location\'s paymethods without a customer', async () => {
    const loc = unique('loc_');
    const path = `${locationPath(ORG, loc)}/paymethods`;
    await created(customerPath(ORG, loc, unique('cst_')), { card: CARD });
    const first = await created(path, { card: CARD, fail_on_duplicate: true });
    const refused = await post(path, { card: CARD, fail_on_duplicate: true });
    expectError(refused, 409, ['card.account_number']);
    expect(refused.text).toContain(String(first.paymethod_token));
    await created(`${locationPath(ORG, unique('loc_'))}/paymethods`, { card: CARD, fail_on_duplicate: true });
  });

  it('follows an echeck whose routing number an update changes: another account, another fingerprint', async () => {
    const loc = unique('loc_');
    const path = customerPath(ORG, loc, unique('cst_'));
    const echeck = await created(path, { echeck: ECHECK });
    const token = String(echeck.paymethod_token);
    const moved = await call(`${locationPath(ORG, loc)}/paymethods/${token}`, { method: 'PUT', body: { echeck: { account_holder: 'Ann Lee', routing_number: '011000015' } } });
    expect(moved.status, moved.text).toBe(200);
    const newAccount = await created(`${locationPath(ORG, unique('loc_'))}/paymethods`, { echeck: { ...ECHECK, routing_number: '011000015' } });
    // What a create of the same routing and account number computes, on the update's answer and on a read.
    expect(fingerprintOf(moved.body)).toBe(fingerprintOf(newAccount));
    expect(fingerprintOf((await call(`${locationPath(ORG, loc)}/paymethods/${token}`)).body)).toBe(fingerprintOf(newAccount));
    // The fingerprint filter and the duplicate check follow: the old account is free, the new one taken.
    expect(resultsOf(await call(`${locationPath(ORG, loc)}/paymethods${byFingerprint(fingerprintOf(echeck)!)}`))).toEqual([]);
    expect(resultsOf(await call(`${locationPath(ORG, loc)}/paymethods${byFingerprint(fingerprintOf(newAccount)!)}`)).map((found) => found.paymethod_token)).toEqual([token]);
    await created(path, { echeck: ECHECK, fail_on_duplicate: true });
    expectError(await post(path, { echeck: { ...ECHECK, routing_number: '011000015' }, fail_on_duplicate: true }), 409, ['echeck.account_number']);
    // The same routing number sent again changes nothing.
    const same = await call(`${locationPath(ORG, loc)}/paymethods/${token}`, { method: 'PUT', body: { echeck: { account_holder: 'Ann B. Lee', routing_number: '011000015' } } });
    expect(fingerprintOf(same.body)).toBe(fingerprintOf(newAccount));
  });

  it('lets a duplicate in again once the first is deleted, and follows a paymethod moved to another customer', async () => {
    const loc = unique('loc_');
    const [cstA, cstB] = [unique('cst_'), unique('cst_')];
    const first = await created(customerPath(ORG, loc, cstA), { card: CARD });
    const moved = await call(`${locationPath(ORG, loc)}/paymethods/${String(first.paymethod_token)}`, { method: 'PUT', body: { customer_token: cstB } });
    expect(moved.status, moved.text).toBe(200);
    expectError(await post(customerPath(ORG, loc, cstB), { card: CARD, fail_on_duplicate: true }), 409);
    const back = await created(customerPath(ORG, loc, cstA), { card: CARD, fail_on_duplicate: true });
    const deleted = await call(`${locationPath(ORG, loc)}/paymethods/${String(back.paymethod_token)}`, { method: 'DELETE' });
    expect(deleted.status, deleted.text).toBe(200);
    await created(customerPath(ORG, loc, cstA), { card: CARD, fail_on_duplicate: true });
  });

  it('of two racing creates of the same card for the same customer, exactly one succeeds', async () => {
    for (let round = 0; round < 3; round += 1) {
      const path = customerPath(ORG, unique('loc_'), unique('cst_'));
      const answers = await Promise.all([0, 1].map(() => post(path, { card: CARD, fail_on_duplicate: true })));
      expect(answers.map((answer) => answer.status).sort(), answers.map((answer) => answer.text).join('\n')).toEqual([201, 409]);
      const refusal = answers.find((answer) => answer.status === 409)!;
      expect(refusal.text).toContain('DUPLICATE_PAYMETHOD');
    }
  });

  it('does not consume the one-time token it refuses', async () => {
    const loc = unique('loc_');
    const path = customerPath(ORG, loc, unique('cst_'));
    await created(path, { card: CARD });
    const minted = await post(`${locationPath(ORG, loc)}/onetimetokens`, { card: CARD });
    const token = minted.body.one_time_token;
    expectError(await post(path, { card: { one_time_token: token, name_on_card: 'Ann Lee' }, fail_on_duplicate: true }), 409);
    // Still usable: for another customer, or for this one without the flag.
    await created(customerPath(ORG, loc, unique('cst_')), { card: { one_time_token: token, name_on_card: 'Ann Lee' }, fail_on_duplicate: true });
  });
});

