import { describe, expect, it } from 'vitest';
import { baseUrl, call, MERCHANT, PARTNER, UNRELATED, useRuntimeEnvironment } from '../support/api.ts';
import { CARD, createCard, criteriaOf, customerPath, ECHECK, expectError, linksOf, locationPath, PAYPAL, post, resultsOf, unique } from '../support/paymethods.ts';

const ORG = MERCHANT.organizationId;
const tokens = (answer: { body: Record<string, unknown> }) => (answer.body.results as Array<{ paymethod_token: string }>).map((item) => item.paymethod_token);

describe('get paymethods', () => {
  it('gets a paymethod at its location and at organization level, with is_default', async () => {
    const loc = unique('loc_');
    const cst = unique('cst_');
    const made = await createCard(ORG, loc, cst, { label: 'L', notes: 'N', customer_id: 'C-1', billing_address_token: 'add_1' });
    for (const path of [`${locationPath(ORG, loc)}/paymethods/${made.paymethod_token}`, `/v3/organizations/${ORG}/paymethods/${made.paymethod_token}/`]) {
      const answer = await call(path);
      expect(answer.status, answer.text).toBe(200);
      expect(Object.keys(answer.body).sort()).toEqual(
        ['billing_address_token', 'card', 'customer_id', 'customer_token', 'is_default', 'label', 'links', 'location_id', 'notes', 'organization_id', 'paymethod_token', 'response'].sort(),
      );
      expect(answer.body).toMatchObject({ organization_id: ORG, location_id: loc, customer_token: cst, is_default: 'true', response: { response_desc: 'Get Successful.' } });
    }
  });

  it('answers 404 for records of another location, organization or an unknown token', async () => {
    const loc = unique('loc_');
    const made = await createCard(ORG, loc, undefined);
    expectError(await call(`${locationPath(ORG, unique('loc_'))}/paymethods/${made.paymethod_token}`), 404);
    expectError(await call(`${locationPath(ORG, loc)}/paymethods/mth_doesnotexist0000000000`), 404);
    // The partner's own record is not visible under its merchant's path.
    const partners = await post(`${locationPath(PARTNER.organizationId, loc)}/paymethods`, { card: CARD }, { as: PARTNER });
    expect(partners.status).toBe(201);
    const answer = await call(`/v3/organizations/${ORG}/paymethods/${partners.body.paymethod_token}`, { as: PARTNER });
    expectError(answer, 404);
    expect(answer.text).not.toContain('Ann Lee');
    expectError(await call(`${locationPath(ORG, loc)}/paymethods/${made.paymethod_token}`, { as: UNRELATED }), 403);
    expectError(await call(`${locationPath(ORG, loc)}/paymethods/${String(made.paymethod_token).slice(4)}`), 404);
  });
});

describe('list paymethods', () => {
  it('lists a customer newest first with the list envelope; the first paymethod is the default', async () => {
    const loc = unique('loc_');
    const cst = unique('cst_');
    const first = await createCard(ORG, loc, cst);
    const second = await post(customerPath(ORG, loc, cst), { echeck: ECHECK });
    const answer = await call(customerPath(ORG, loc, cst));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      number_results: 2,
      search_criteria: { page_size: 50, page_index: 0, home_organization_id: ORG, resource_specific: { location_id: loc, customer_token: cst } },
      response: { environment: 'local', response_desc: 'Get Successful.' },
    });
    expect(tokens(answer)).toEqual([second.body.paymethod_token, first.paymethod_token]);
    const results = resultsOf(answer);
    expect(results.map((item) => item.is_default)).toEqual(['false', 'true']);
    expect((results[0]?.links as Record<string, string>).self).toContain(`/paymethods/${second.body.paymethod_token}`);
    expect(linksOf(answer).next).toBeUndefined();
  });

  it("lets a partner read its merchant's list; refuses an unrelated organization", async () => {
    const loc = unique('loc_');
    await createCard(ORG, loc, undefined);
    const partner = await call(`${locationPath(ORG, loc)}/paymethods`, { as: PARTNER });
    expect(partner.status).toBe(200);
    expect(criteriaOf(partner).home_organization_id).toBe(PARTNER.organizationId);
    expect(criteriaOf(await call(`${locationPath(ORG, loc)}/paymethods`)).home_organization_id).toBe(ORG);
    expectError(await call(`${locationPath(ORG, loc)}/paymethods`, { as: UNRELATED }), 403);
    expectError(await call(`/v3/organizations/${ORG}/paymethods`, { as: UNRELATED }), 403);
  });

  it('filters with plain parameters and with a filter expression alike', async () => {
    const loc = unique('loc_');
    const cst = unique('cst_');
    const card = await createCard(ORG, loc, cst, { customer_id: 'CID-7' });
    const echeck = await post(`${locationPath(ORG, loc)}/paymethods`, { customer_token: cst, echeck: ECHECK });
    const vendor = await post(`${locationPath(ORG, loc)}/paymethods`, { vendor: PAYPAL });
    const base = `${locationPath(ORG, loc)}/paymethods`;
    expect(tokens(await call(`${base}?paymethod_type=echeck`))).toEqual([echeck.body.paymethod_token]);
    expect(tokens(await call(`${base}?filter=${encodeURIComponent("paymethod_type eq 'vendor'")}`))).toEqual([vendor.body.paymethod_token]);
    expect(tokens(await call(`${base}?filter=${encodeURIComponent(`customer_token EQ ${cst} AND paymethod_type eq card`)}`))).toEqual([card.paymethod_token]);
    const byCustomerId = await call(`/v3/organizations/${ORG}/paymethods?customer_id=CID-7`);
    expect(tokens(byCustomerId)).toEqual([card.paymethod_token]);
    expect(criteriaOf(byCustomerId).resource_specific).toEqual({ customer_id: 'CID-7' });
    const orgLevel = await call(`/v3/organizations/${ORG}/paymethods?location_id=${loc}&customer_token=${cst}`);
    expect(tokens(orgLevel)).toEqual([echeck.body.paymethod_token, card.paymethod_token]);
    expect(criteriaOf(orgLevel).resource_specific).toEqual({ location_id: loc, customer_token: cst });
  });

  it('refuses unknown parameters, repeated filters, bad expressions and bad page sizes', async () => {
    const base = `${locationPath(ORG, 'loc_1')}/paymethods`;
    expectError(await call(`${base}?colour=red`), 400, ['colour']);
    expectError(await call(`${base}?customer_token=cst_a&filter=${encodeURIComponent("customer_token eq 'cst_b'")}`), 400);
    expectError(await call(`${base}?filter=${encodeURIComponent("paymethod_type eq 'card")}`), 400, ['filter']);
    expectError(await call(`${base}?filter=${encodeURIComponent("location_id eq 'loc_1'")}`), 400, ['filter']);
    expectError(await call(`${base}?start_au_updated_date=2024-13-01`), 400, ['start_au_updated_date']);
    expectError(await call(`${base}?page_size=0`), 400, ['page_size']);
    expectError(await call(`${base}?page_size=1001`), 400, ['page_size']);
    expectError(await call(`${base}?page_index=-1`), 400, ['page_index']);
    expectError(await call(`${base}?paymethod_type=cash`), 400, ['paymethod_type']);
    expectError(await call(`${base}?cursor=garbage`), 400, ['cursor']);
  });

  it('pages with links.next (page_index + cursor), bare page_index, and an empty page past the end', async () => {
    const loc = unique('loc_');
    const made: string[] = [];
    for (let index = 0; index < 5; index += 1) made.unshift((await createCard(ORG, loc, undefined)).paymethod_token as string);
    const base = `${locationPath(ORG, loc)}/paymethods`;
    const first = await call(`${base}?page_size=2&paymethod_type=card`);
    expect(tokens(first)).toEqual(made.slice(0, 2));
    const next = new URL(linksOf(first).next as string);
    expect(next.searchParams.get('page_index')).toBe('1');
    expect(next.searchParams.get('cursor')).toBeTruthy();
    expect(next.searchParams.get('page_size')).toBe('2');
    expect(next.searchParams.get('paymethod_type')).toBe('card');
    const second = await call(`${next.pathname}${next.search}`);
    expect(tokens(second)).toEqual(made.slice(2, 4));
    expect(criteriaOf(second).page_index).toBe(1);
    const thirdUrl = new URL(linksOf(second).next as string);
    const third = await call(`${thirdUrl.pathname}${thirdUrl.search}`);
    expect(tokens(third)).toEqual(made.slice(4));
    expect(linksOf(third).next).toBeUndefined();
    expect(tokens(await call(`${base}?page_size=2&page_index=1`))).toEqual(made.slice(2, 4));
    const past = await call(`${base}?page_size=2&page_index=9`);
    expect(past.body.number_results).toBe(0);
    expect(linksOf(past).next).toBeUndefined();
  });

  it('serves the Account Updater report from the AU index, cards only, dates echoed', async () => {
    const env = useRuntimeEnvironment();
    const { paymethodStore } = await import('../support/paymethod-store.ts');
    const { dynamo } = await import('#shared/aws/dynamodb.ts');
    const store = paymethodStore(dynamo, env.TABLE_NAME as string);
    const loc = unique('loc_');
    const inMay = await createCard(ORG, loc, undefined);
    const inJune = await createCard(ORG, loc, undefined);
    await createCard(ORG, loc, undefined); // never updated: not in the report
    // Through the repository's Account Updater port: the same conditional write the apply step makes.
    const recordUpdate = async (token: string, au_code: string, au_description: string, au_updated_date: string) => {
      const found = (await store.findCards([token])).get(token)!;
      const card = { ...found.paymethod.card!, au_code, au_description, au_updated_date };
      const source = { file_id: 'test', line: 2, run_id: 'test', before: { card: found.paymethod.card! } };
      expect(await store.applyAccountUpdates([{ current: found.paymethod, card, source, updatedAt: au_updated_date }])).toEqual(['applied']);
    };
    await recordUpdate(inMay.paymethod_token as string, 'new', 'New account number', '2020-05-31T23:59:59.500Z');
    await recordUpdate(inJune.paymethod_token as string, 'exp', 'New expiration date', '2020-06-01T00:00:00.000Z');
    const report = await call(`/v3/organizations/${ORG}/paymethods/?filter=${encodeURIComponent("start_au_updated_date eq '2020-05-01' and end_au_updated_date eq '2020-05-31'")}&location_id=${loc}`);
    expect(report.status, report.text).toBe(200);
    expect(tokens(report)).toEqual([inMay.paymethod_token]);
    expect(resultsOf(report)[0]?.card).toMatchObject({ au_code: 'new', au_description: 'New account number', au_updated_date: '2020-05-31T23:59:59.500Z' });
    expect(criteriaOf(report).resource_specific).toEqual({ start_au_updated_date: '2020-05-01T00:00:00', end_au_updated_date: '2020-05-31T23:59:59', location_id: loc });
    const location = await call(`${locationPath(ORG, loc)}/paymethods?start_au_updated_date=2020-06-01T00:00:00&paymethod_type=card`);
    expect(tokens(location)).toEqual([inJune.paymethod_token]);
    expect(tokens(await call(`${locationPath(ORG, loc)}/paymethods?start_au_updated_date=2020-01-01&paymethod_type=echeck`))).toEqual([]);
  });
});

describe('update paymethods', () => {
  it('moves a paymethod to another customer keeping both defaults coherent', async () => {
    const loc = unique('loc_');
    const [a, b] = [unique('cst_'), unique('cst_')];
    const first = await createCard(ORG, loc, a);
    const second = await createCard(ORG, loc, a);
    const moved = await call(`${locationPath(ORG, loc)}/paymethods/${first.paymethod_token}`, { method: 'PUT', body: { customer_token: b } });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body).toMatchObject({ paymethod_token: first.paymethod_token, location_id: loc, customer_token: b, response: { response_desc: 'Update Successful.' } });
    const listA = await call(customerPath(ORG, loc, a));
    expect(resultsOf(listA).map((item) => [item.paymethod_token, item.is_default])).toEqual([[second.paymethod_token, 'true']]);
    const listB = await call(customerPath(ORG, loc, b));
    expect(resultsOf(listB).map((item) => [item.paymethod_token, item.is_default])).toEqual([[first.paymethod_token, 'true']]);
  });

  it('updates an echeck partially; refuses account_number and a missing holder or routing number', async () => {
    const loc = unique('loc_');
    const made = await post(`${locationPath(ORG, loc)}/paymethods`, { label: 'old', notes: 'keep', echeck: ECHECK });
    const path = `${locationPath(ORG, loc)}/paymethods/${made.body.paymethod_token}`;
    const answer = await call(path, { method: 'PUT', body: { label: 'new', echeck: { account_holder: 'Bo Li', routing_number: '011000015', account_type: 'SAVINGS', item_description: 'x' } } });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ label: 'new', notes: 'keep', echeck: { account_holder: 'Bo Li', routing_number: '011000015', account_type: 'savings', sec_code: 'WEB', masked_account_number: '****1012' } });
    expectError(await call(path, { method: 'PUT', body: { echeck: { account_holder: 'A', routing_number: '011000015', account_number: '1234' } } }), 400, ['echeck.account_number']);
    expectError(await call(path, { method: 'PUT', body: { echeck: { account_type: 'checking' } } }), 400, ['echeck.account_holder', 'echeck.routing_number']);
    expectError(await call(path, { method: 'PUT', body: { card: { expire_month: 1 } } }), 400, ['card']);
    expectError(await call(path, { method: 'PUT', body: {} }), 400);
    expect((await call(path)).body).toMatchObject({ label: 'new', echeck: { account_holder: 'Bo Li' } });
  });

  it('updates the billing address and the card expiry (CVV validated, discarded)', async () => {
    const loc = unique('loc_');
    const made = await createCard(ORG, loc, undefined, { billing_address_token: 'add_old' });
    const path = `${locationPath(ORG, loc)}/paymethods/${made.paymethod_token}`;
    expect((await call(path, { method: 'PUT', body: { billing_address_token: 'add_new' } })).body.billing_address_token).toBe('add_new');
    const card = await call(path, { method: 'PUT', body: { card: { expire_month: '01', expire_year: '2032', card_verification_value: '999' } } });
    expect(card.status, card.text).toBe(200);
    expect(card.body.card).toMatchObject({ expire_month: 1, expire_year: 2032, masked_account_number: '****1111' });
    expect(card.text).not.toContain('999');
    expectError(await call(path, { method: 'PUT', body: { card: { card_verification_value: '9x' } } }), 400, ['card.card_verification_value']);
    expectError(await call(path, { method: 'PUT', body: { card: { account_number: '4111111111111111' } } }), 400, ['card.account_number']);
    expectError(await call(path, { method: 'PUT', body: { card: { expire_year: 2001 } } }), 400, ['card.expire_year']);
    expectError(await call(path, { method: 'PUT', body: { billing_address_token: 'bad' } }), 400, ['billing_address_token']);
    expectError(await call(`${locationPath(ORG, unique('loc_'))}/paymethods/${made.paymethod_token}`, { method: 'PUT', body: { notes: 'x' } }), 404);
  });
});

describe('delete paymethods', () => {
  it('deletes the record; the newest remaining paymethod becomes the default', async () => {
    const loc = unique('loc_');
    const cst = unique('cst_');
    const oldest = await createCard(ORG, loc, cst);
    const middle = await createCard(ORG, loc, cst);
    const newest = await createCard(ORG, loc, cst);
    const path = `${locationPath(ORG, loc)}/paymethods/${oldest.paymethod_token}`;
    expectError(await call(path, { method: 'DELETE', as: UNRELATED }), 403);
    const answer = await call(path, { method: 'DELETE' });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toEqual({ paymethod_token: oldest.paymethod_token, response: { environment: 'local', response_desc: 'Delete Successful.' } });
    expectError(await call(path), 404);
    expectError(await call(path, { method: 'DELETE' }), 404);
    const list = await call(customerPath(ORG, loc, cst));
    expect(resultsOf(list).map((item) => [item.paymethod_token, item.is_default])).toEqual([
      [newest.paymethod_token, 'true'],
      [middle.paymethod_token, 'false'],
    ]);
  });

  it('removes the ciphertext with the record', async () => {
    const env = useRuntimeEnvironment();
    const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
    const { dynamo } = await import('#shared/aws/dynamodb.ts');
    const loc = unique('loc_');
    const made = await createCard(ORG, loc, undefined);
    const key = { pk: `MTH#${made.paymethod_token}`, sk: 'MTH' };
    const before = await dynamo.send(new GetCommand({ TableName: env.TABLE_NAME, Key: key }));
    expect(before.Item?.vault?.ciphertext).toBeInstanceOf(Uint8Array);
    expect(JSON.stringify(before.Item)).not.toContain(CARD.account_number);
    await call(`${locationPath(ORG, loc)}/paymethods/${made.paymethod_token}`, { method: 'DELETE' });
    expect((await dynamo.send(new GetCommand({ TableName: env.TABLE_NAME, Key: key }))).Item).toBeUndefined();
  });
});

describe('a paymethod at the organization-level path', () => {
  const locationless = async () => {
    const made = await post(`/v3/customers/${unique('cst_')}/paymethods`, { organization_id: ORG, card: CARD });
    expect(made.status, made.text).toBe(201);
    return made.body.paymethod_token as string;
  };

  it('updates and deletes a locationless paymethod at its links.self, the one path it has', async () => {
    const token = await locationless();
    const self = `/v3/organizations/${ORG}/paymethods/${token}`;
    expect(linksOf(await call(self)).self).toBe(`${baseUrl()}${self}`);
    expectError(await call(self, { method: 'PUT', body: { label: 'x' }, as: UNRELATED }), 403);
    const updated = await call(self, { method: 'PUT', body: { label: 'Renamed', card: { expire_month: 1, expire_year: 2034 } } });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({ paymethod_token: token, response: { response_desc: 'Update Successful.' } });
    expect((await call(self)).body).toMatchObject({ label: 'Renamed', card: { expire_month: 1, expire_year: 2034 } });
    expectError(await call(self, { method: 'PUT', body: { card: { account_number: '4111111111111111' } } }), 400, ['card.account_number']);

    const deleted = await call(self, { method: 'DELETE' });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ paymethod_token: token, response: { environment: 'local', response_desc: 'Delete Successful.' } });
    expectError(await call(self), 404);
    expectError(await call(self, { method: 'DELETE' }), 404);
    expectError(await call(self, { method: 'PUT', body: { label: 'gone' } }), 404);
  });

  it('reaches a record of any location of the organization, and none of another organization', async () => {
    const loc = unique('loc_');
    const made = await createCard(ORG, loc, undefined);
    const self = `/v3/organizations/${ORG}/paymethods/${made.paymethod_token}`;
    expect((await call(self, { method: 'PUT', body: { label: 'Org level' } })).status).toBe(200);
    expect((await call(`${locationPath(ORG, loc)}/paymethods/${made.paymethod_token}`)).body).toMatchObject({ label: 'Org level', location_id: loc });
    // Another organization's record is not found under this one's path, whoever asks.
    const partners = await post(`${locationPath(PARTNER.organizationId, loc)}/paymethods`, { card: CARD }, { as: PARTNER });
    expectError(await call(`/v3/organizations/${ORG}/paymethods/${partners.body.paymethod_token as string}`, { method: 'DELETE', as: PARTNER }), 404);
    expect((await call(`/v3/organizations/${PARTNER.organizationId}/paymethods/${partners.body.paymethod_token as string}`, { as: PARTNER })).status).toBe(200);
    expect((await call(self, { method: 'DELETE' })).status).toBe(200);
    expectError(await call(`${locationPath(ORG, loc)}/paymethods/${made.paymethod_token}`), 404);
  });
});
