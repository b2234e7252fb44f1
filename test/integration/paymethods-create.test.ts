import { describe, expect, it } from 'vitest';
import { call, MERCHANT, PARTNER, UNRELATED } from '../support/api.ts';
import { CARD, CARD_NUMBER, customerPath, ECHECK, ECHECK_NUMBER, expectError, linksOf, locationPath, PAYPAL, post, resultsOf, unique } from '../support/paymethods.ts';

const ORG = MERCHANT.organizationId;

describe('create paymethods', () => {
  it('creates a card for the path customer with exactly the spec members', async () => {
    const loc = unique('loc_');
    const cst = unique('cst_');
    const answer = await post(customerPath(ORG, loc, cst), { label: 'Visa', notes: 'main card', billing_address_token: 'add_123', card: { ...CARD, procurement_card: 'true', customer_accounting_code: 'ACC-1' } });
    expect(answer.status, answer.text).toBe(201);
    const body = answer.body;
    const links = linksOf(answer);
    expect(Object.keys(body).sort()).toEqual(['billing_address_token', 'card', 'customer_token', 'label', 'links', 'location_id', 'notes', 'paymethod_token', 'response'].sort());
    expect(body.paymethod_token).toMatch(/^mth_[A-Za-z0-9]{22}$/);
    expect(body).toMatchObject({ location_id: loc, customer_token: cst, billing_address_token: 'add_123', response: { environment: 'local', response_desc: 'Create Successful.' } });
    expect(body.card).toEqual({
      card_type: 'visa',
      name_on_card: 'Ann Lee',
      last_4_account_number: '1111',
      masked_account_number: '****1111',
      expire_month: 12,
      expire_year: 2031,
      procurement_card: true,
      fingerprint: expect.stringMatching(/^fp_[A-Za-z0-9_-]{43}$/),
    });
    const self = `${locationPath(ORG, loc)}/paymethods/${body.paymethod_token}`;
    expect(links.self).toMatch(new RegExp(`^http://localhost:\\d+${self}$`));
    expect(links.transactions).toBe(`${links.self}/transactions`);
    expect(answer.headers.get('location')).toBe(links.self);
    expect(answer.headers.get('x-request-id')).toBeTruthy();
    expect(answer.text).not.toContain(CARD_NUMBER);
    expect(answer.text).not.toContain('ACC-1');
    expect(answer.text).not.toContain('"123"');
  });

  it('creates an echeck with the number masked', async () => {
    const answer = await post(customerPath(ORG, unique('loc_'), unique('cst_')), { notes: 'checking', echeck: { ...ECHECK, item_description: 'rent' } });
    expect(answer.status, answer.text).toBe(201);
    expect(answer.body.echeck).toEqual({
      account_holder: 'Ann Lee',
      last_4_account_number: '1012',
      masked_account_number: '****1012',
      routing_number: '021000021',
      account_type: 'checking',
      sec_code: 'WEB',
      item_description: 'rent',
      fingerprint: expect.stringMatching(/^fp_[A-Za-z0-9_-]{43}$/),
    });
    expect(answer.text).not.toContain(ECHECK_NUMBER);
  });

  it('accepts a Canadian routing number in the 0AAABBBBB form', async () => {
    const answer = await post(`${locationPath(ORG, unique('loc_'))}/paymethods`, { echeck: { ...ECHECK, routing_number: '000112345' } });
    expect(answer.status, answer.text).toBe(201);
  });

  it('creates PayPal paymethods with vendor and with the vendors alias', async () => {
    const loc = unique('loc_');
    for (const member of ['vendor', 'vendors']) {
      const answer = await post(customerPath(ORG, loc, unique('cst_')), { label: 'PayPal', notes: 'pp', [member]: PAYPAL });
      expect(answer.status, answer.text).toBe(201);
      expect(answer.body.vendor).toEqual({ vendor_type: 'paypal', vendor_billing_agreement_token: PAYPAL.vendor_billing_agreement_token, vendor_billing_agreement_id: expect.stringMatching(/^B-[A-Z0-9]{17}$/) });
      expect(answer.body).not.toHaveProperty('vendors');
    }
  });

  it('answers 400 when PayPal refuses the agreement token, writing nothing', async () => {
    const loc = unique('loc_');
    const cst = unique('cst_');
    expectError(await post(customerPath(ORG, loc, cst), { vendor: { ...PAYPAL, vendor_billing_agreement_token: 'EC-NOTABILLINGTOKEN' } }), 400, ['vendor.vendor_billing_agreement_token']);
    expect((await call(customerPath(ORG, loc, cst))).body.number_results).toBe(0);
  });

  it('creates clientless paymethods at a location, and attaches a body customer_token', async () => {
    const loc = unique('loc_');
    const clientless = await post(`${locationPath(ORG, loc)}/paymethods`, { card: CARD });
    expect(clientless.status).toBe(201);
    expect(clientless.body).not.toHaveProperty('customer_token');
    const cst = unique('cst_');
    const attached = await post(`${locationPath(ORG, loc)}/paymethods`, { customer_token: cst, echeck: ECHECK });
    expect(attached.body.customer_token).toBe(cst);
    const list = await call(customerPath(ORG, loc, cst));
    expect(resultsOf(list).map((item) => item.paymethod_token)).toEqual([attached.body.paymethod_token]);
  });

  it('refuses a body customer_token that differs from the path customer', async () => {
    expectError(await post(customerPath(ORG, unique('loc_'), 'cst_path'), { customer_token: 'cst_body', card: CARD }), 400, ['customer_token']);
  });

  it('creates locationless paymethods with the organization in the body', async () => {
    const cst = unique('cst_');
    const answer = await post(`/v3/customers/${cst}/paymethods`, { organization_id: ORG, notes: 'no location', card: { ...CARD, card_type: 'mast', account_number: '5555555555554444' } });
    expect(answer.status, answer.text).toBe(201);
    expect(Object.keys(answer.body).sort()).toEqual(['card', 'customer_token', 'links', 'notes', 'organization_id', 'paymethod_token', 'response']);
    expect(linksOf(answer).self).toMatch(new RegExp(`/v3/organizations/${ORG}/paymethods/${answer.body.paymethod_token}$`));
    const fetched = await call(`/v3/organizations/${ORG}/paymethods/${answer.body.paymethod_token}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).not.toHaveProperty('location_id');
    expect(fetched.body.is_default).toBe('true');
  });

  it('applies tenancy to the locationless body organization: 403, before field rules', async () => {
    expectError(await post('/v3/customers/cst_x/paymethods', { organization_id: UNRELATED.organizationId, card: CARD }), 403);
    expectError(await post('/v3/customers/cst_x/paymethods', { organization_id: UNRELATED.organizationId, card: { account_number: 'x' } }), 403);
    // A partner may create for its merchant.
    expect((await post('/v3/customers/cst_x/paymethods', { organization_id: ORG, card: CARD }, { as: PARTNER })).status).toBe(201);
    expectError(await post('/v3/customers/cst_x/paymethods', { card: CARD }), 400, ['organization_id']);
    // An id that is not org_<id> names no organization: refused, never stored under it.
    for (const malformed of ['200', '', `${ORG} `, 'ORG_200']) expectError(await post('/v3/customers/cst_x/paymethods', { organization_id: malformed, card: CARD }), 400, ['organization_id']);
    expectError(await post('/v3/customers/cst_x/paymethods', { organization_id: ORG, card: { one_time_token: 'ott_abc', name_on_card: 'A' } }), 400, ['card.one_time_token']);
  });

  it('answers 403 for an organization the caller does not own', async () => {
    expectError(await post(`${locationPath(ORG, 'loc_1')}/paymethods`, { card: CARD }, { as: UNRELATED }), 403);
  });
});

describe('create: bad input writes nothing', () => {
  it('reports every failing field at once', async () => {
    const loc = unique('loc_');
    const cst = unique('cst_');
    const answer = await post(customerPath(ORG, loc, cst), {
      label: 'x'.repeat(51),
      customer_id: '1234567890123456',
      notes: 12,
      card: { card_type: 'diners', name_on_card: '😀'.repeat(51), account_number: '4111111111111112', expire_month: 0, expire_year: '20x', card_verification_value: '12345', procurement_card: 'yes', colour: 'red' },
      typo: true,
    });
    expectError(answer, 400, [
      'label',
      'customer_id',
      'notes',
      'card.card_type',
      'card.name_on_card',
      'card.account_number',
      'card.expire_month',
      'card.expire_year',
      'card.card_verification_value',
      'card.procurement_card',
      'card.colour',
      'typo',
    ]);
    const response = answer.body.response as Record<string, string>;
    expect(response.response_code).toBe('VALIDATION_ERROR');
    expect(response.response_desc).toContain('Error[12]:');
    expect(answer.text).not.toContain('4111111111111112');
    expect((await call(customerPath(ORG, loc, cst))).body.number_results).toBe(0);
  });

  it('accepts 50 emoji as a 50-character name (code points)', async () => {
    expect((await post(`${locationPath(ORG, unique('loc_'))}/paymethods`, { card: { ...CARD, name_on_card: '😀'.repeat(50) } })).status).toBe(201);
  });

  it('refuses missing members, several sub-objects and an expired card', async () => {
    const path = `${locationPath(ORG, unique('loc_'))}/paymethods`;
    expectError(await post(path, { card: { name_on_card: 'A' } }), 400, ['card.card_type', 'card.account_number', 'card.expire_month', 'card.expire_year']);
    expectError(await post(path, { echeck: { account_holder: 'A' } }), 400, ['echeck.account_number', 'echeck.routing_number', 'echeck.sec_code']);
    expectError(await post(path, { notes: 'nothing' }), 400);
    expectError(await post(path, { card: CARD, echeck: ECHECK }), 400);
    const lastYear = new Date().getUTCFullYear() - 1;
    expectError(await post(path, { card: { ...CARD, expire_year: lastYear } }), 400, ['card.expire_year']);
    expectError(await post(path, { echeck: { ...ECHECK, routing_number: '123456789', sec_code: 'XYZ', account_type: 'brokerage', account_number: '12' } }), 400, [
      'echeck.routing_number',
      'echeck.sec_code',
      'echeck.account_type',
      'echeck.account_number',
    ]);
    expectError(await post(path, { card: { ...CARD, account_number: 4111111111111111, expire_month: true } }), 400, ['card.account_number', 'card.expire_month']);
    expectError(await post(path, { card: 'visa' }), 400, ['card']);
  });

  it('treats null members as absent', async () => {
    const answer = await post(`${locationPath(ORG, unique('loc_'))}/paymethods`, { label: null, card: { ...CARD, procurement_card: null } });
    expect(answer.status, answer.text).toBe(201);
    expect(answer.body).not.toHaveProperty('label');
  });

  it('answers malformed JSON with 400 and a wrong Content-Type with 415', async () => {
    const path = `${locationPath(ORG, 'loc_1')}/paymethods`;
    expectError(await call(path, { method: 'POST', rawBody: '{"card": ', headers: { 'Content-Type': 'application/json' } }), 400);
    expectError(await call(path, { method: 'POST', rawBody: '[]', headers: { 'Content-Type': 'application/json' } }), 400);
    expectError(await call(path, { method: 'POST', rawBody: 'card=1', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }), 415);
  });

  it('answers 404 for path segments without their prefixes', async () => {
    expectError(await post('/v3/organizations/200/locations/loc_1/paymethods', { card: CARD }), 404);
    expectError(await post(`/v3/organizations/${ORG}/locations/1/paymethods`, { card: CARD }), 404);
    expectError(await post(`/v3/organizations/${ORG}/locations/loc_1/customers/abc/paymethods`, { card: CARD }), 404);
    expectError(await post('/v3/customers/abc/paymethods', { organization_id: ORG, card: CARD }), 404);
    expectError(await post(`/v3/organizations/${ORG}/locations/loc_1/customers/cst_${'x'.repeat(23)}/paymethods`, { card: CARD }), 404);
  });
});
