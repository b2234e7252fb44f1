import { describe, expect, it } from 'vitest';
import { call, MERCHANT, PARTNER, useRuntimeEnvironment } from '../support/api.ts';
import { CARD, CARD_NUMBER, customerPath, ECHECK, errorsOf, expectError, locationPath, post, unique } from '../support/paymethods.ts';

const ORG = MERCHANT.organizationId;

async function mint(loc: string, body: Record<string, unknown>): Promise<Record<string, string>> {
  const answer = await post(`${locationPath(ORG, loc)}/onetimetokens`, body);
  expect(answer.status, answer.text).toBe(201);
  return answer.body as Record<string, string>;
}

describe('one-time tokens', () => {
  it('mints a card token: ott_ token, ISO expiry an hour out, masked card, no fingerprint', async () => {
    const loc = unique('loc_');
    const before = Date.now();
    const token = await mint(loc, { card: CARD });
    expect(token.one_time_token).toMatch(/^ott_[A-Za-z0-9]{22}$/);
    const expiresAt = Date.parse(token.expires_at as string);
    expect(expiresAt - before).toBeGreaterThan(59 * 60_000);
    expect(expiresAt - before).toBeLessThanOrEqual(61 * 60_000);
    expect(token.card).toEqual({ card_type: 'visa', name_on_card: 'Ann Lee', last_4_account_number: '1111', masked_account_number: '****1111', expire_month: 12, expire_year: 2031 });
    expect(JSON.stringify(token)).not.toContain(CARD_NUMBER);
  });

  it('creates a permanent card token once; members beside the token override; a second use is 409', async () => {
    const loc = unique('loc_');
    const cst = unique('cst_');
    const { one_time_token: ott } = await mint(loc, { card: CARD });
    const created = await post(customerPath(ORG, loc, cst), { label: 'from token', card: { one_time_token: ott, name_on_card: 'Other Name' } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.card).toMatchObject({ one_time_token: ott, name_on_card: 'Other Name', masked_account_number: '****1111', card_type: 'visa', expire_year: 2031 });
    expectError(await post(customerPath(ORG, loc, cst), { card: { one_time_token: ott, name_on_card: 'Again' } }), 409);
  });

  it("takes a card_type beside a card token when it is the token number's brand, and refuses another without consuming the token", async () => {
    const loc = unique('loc_');
    const { one_time_token: ott } = await mint(loc, { card: CARD });
    const mismatched = await post(`${locationPath(ORG, loc)}/paymethods`, { card: { one_time_token: ott, name_on_card: 'A', card_type: 'mast' } });
    expectError(mismatched, 400, ['card.card_type']);
    const created = await post(`${locationPath(ORG, loc)}/paymethods`, { card: { one_time_token: ott, name_on_card: 'A', card_type: 'VISA' } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.card).toMatchObject({ card_type: 'visa', masked_account_number: '****1111' });
  });

  it('creates from an echeck token at the clientless location path', async () => {
    const loc = unique('loc_');
    const { one_time_token: ott } = await mint(loc, { echeck: ECHECK });
    const created = await post(`${locationPath(ORG, loc)}/paymethods`, { notes: 'e', echeck: { one_time_token: ott, account_holder: 'Holder Two' } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.echeck).toMatchObject({ one_time_token: ott, account_holder: 'Holder Two', sec_code: 'WEB', masked_account_number: '****1012' });
  });

  it('consumes a token atomically: two concurrent creates give one 201 and one 409', async () => {
    const loc = unique('loc_');
    const cst = unique('cst_');
    const { one_time_token: ott } = await mint(loc, { card: CARD });
    const answers = await Promise.all([1, 2].map(() => post(customerPath(ORG, loc, cst), { card: { one_time_token: ott, name_on_card: 'Race' } })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
    expect((await call(customerPath(ORG, loc, cst))).body.number_results).toBe(1);
  });

  it('refuses unknown tokens, tokens of another location, and wrong kinds with 400; a failed create keeps the token', async () => {
    const loc = unique('loc_');
    const { one_time_token: ott } = await mint(loc, { card: CARD });
    expectError(await post(`${locationPath(ORG, loc)}/paymethods`, { card: { one_time_token: 'ott_unknown0000000000000', name_on_card: 'A' } }), 400, ['card.one_time_token']);
    expectError(await post(`${locationPath(ORG, unique('loc_'))}/paymethods`, { card: { one_time_token: ott, name_on_card: 'A' } }), 400, ['card.one_time_token']);
    expectError(await post(`${locationPath(ORG, loc)}/paymethods`, { echeck: { one_time_token: ott, account_holder: 'A' } }), 400, ['echeck.one_time_token']);
    expectError(await post(`${locationPath(ORG, loc)}/paymethods`, { label: 'x'.repeat(60), card: { one_time_token: ott } }), 400, ['label']);
    expectError(await post(`${locationPath(ORG, loc)}/paymethods`, { card: { one_time_token: ott, name_on_card: 'A', account_number: CARD_NUMBER } }), 400, ['card.account_number']);
    expect((await post(`${locationPath(ORG, loc)}/paymethods`, { card: { one_time_token: ott, name_on_card: 'A' } })).status).toBe(201);
  });

  it('requires name_on_card beside a card token and account_holder beside an echeck token, without consuming the token', async () => {
    const loc = unique('loc_');
    const { one_time_token: cardToken } = await mint(loc, { card: CARD });
    const { one_time_token: echeckToken } = await mint(loc, { echeck: ECHECK });
    const withoutName = await post(`${locationPath(ORG, loc)}/paymethods`, { card: { one_time_token: cardToken } });
    expectError(withoutName, 400, ['card.name_on_card']);
    expect(errorsOf(withoutName)).toEqual([{ field: 'card.name_on_card', message: 'is required' }]);
    const withoutHolder = await post(`${locationPath(ORG, loc)}/paymethods`, { echeck: { one_time_token: echeckToken, sec_code: 'PPD' } });
    expect(errorsOf(withoutHolder)).toEqual([{ field: 'echeck.account_holder', message: 'is required' }]);
    // Neither token was consumed: both still create exactly once.
    const card = await post(`${locationPath(ORG, loc)}/paymethods`, { card: { one_time_token: cardToken, name_on_card: 'Ann Lee' } });
    expect(card.status, card.text).toBe(201);
    const echeck = await post(`${locationPath(ORG, loc)}/paymethods`, { echeck: { one_time_token: echeckToken, account_holder: 'Ann Lee' } });
    expect(echeck.status, echeck.text).toBe(201);
    expect(echeck.body.echeck).toMatchObject({ sec_code: 'WEB', account_holder: 'Ann Lee' });
  });

  it('refuses an expired token with 400', async () => {
    const env = useRuntimeEnvironment();
    const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    const { dynamo } = await import('#shared/aws/dynamodb.ts');
    const loc = unique('loc_');
    const { one_time_token: ott } = await mint(loc, { card: CARD });
    // DynamoDB's TTL deletes lazily, so an expired token can still be read: the expiry check must catch it.
    await dynamo.send(new UpdateCommand({ TableName: env.TABLE_NAME, Key: { pk: `OTT#${ott}`, sk: 'OTT' }, UpdateExpression: 'SET expires_at_iso = :past', ExpressionAttributeValues: { ':past': '2020-01-01T00:00:00.000Z' } }));
    expectError(await post(`${locationPath(ORG, loc)}/paymethods`, { card: { one_time_token: ott, name_on_card: 'A' } }), 400, ['card.one_time_token']);
  });

  it('refuses partial or vendor bodies when minting', async () => {
    const loc = unique('loc_');
    expectError(await post(`${locationPath(ORG, loc)}/onetimetokens`, { card: { name_on_card: 'A' } }), 400, ['card.account_number']);
    expectError(await post(`${locationPath(ORG, loc)}/onetimetokens`, { vendor: { vendor_type: 'paypal' } }), 400, ['vendor']);
    expectError(await post(`${locationPath(ORG, loc)}/onetimetokens`, { card: CARD, label: 'x' }), 400, ['label']);
  });
});

describe('idempotency keys', () => {
  const withKey = (key: string) => ({ headers: { 'Idempotency-Key': key } });

  it('replays the first answer for the same key and body without creating anything', async () => {
    const loc = unique('loc_');
    const cst = unique('cst_');
    const key = unique('key-');
    const first = await post(customerPath(ORG, loc, cst), { card: CARD }, withKey(key));
    const again = await post(customerPath(ORG, loc, cst), { card: CARD }, withKey(key));
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect((await call(customerPath(ORG, loc, cst))).body.number_results).toBe(1);
  });

  it('answers 422 for the same key with another body, and 400 for bad key lengths', async () => {
    const loc = unique('loc_');
    const key = unique('key-');
    expect((await post(`${locationPath(ORG, loc)}/paymethods`, { card: CARD }, withKey(key))).status).toBe(201);
    expectError(await post(`${locationPath(ORG, loc)}/paymethods`, { card: { ...CARD, name_on_card: 'Someone Else' } }, withKey(key)), 422);
    expectError(await post(`${locationPath(ORG, loc)}/paymethods`, { card: CARD }, withKey('k'.repeat(256))), 400);
    expectError(await post(`${locationPath(ORG, loc)}/paymethods`, { card: CARD }, withKey('')), 400);
  });

  it('scopes keys to the authenticated organization', async () => {
    const loc = unique('loc_');
    const key = unique('key-');
    const merchant = await post(`${locationPath(ORG, loc)}/paymethods`, { card: CARD }, withKey(key));
    const partner = await post(`${locationPath(PARTNER.organizationId, loc)}/paymethods`, { card: CARD }, { as: PARTNER, ...withKey(key) });
    expect([merchant.status, partner.status]).toEqual([201, 201]);
    expect(partner.body.paymethod_token).not.toBe(merchant.body.paymethod_token);
  });

  it('creates once under concurrent retries: the other gets 409 (in progress) or the same answer', async () => {
    const loc = unique('loc_');
    const cst = unique('cst_');
    const key = unique('key-');
    const answers = await Promise.all([1, 2, 3].map(() => post(customerPath(ORG, loc, cst), { card: CARD }, withKey(key))));
    const created = answers.filter((answer) => answer.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((answer) => answer.body.paymethod_token)).size).toBe(1);
    for (const answer of answers) expect([201, 409]).toContain(answer.status);
    expect((await call(customerPath(ORG, loc, cst))).body.number_results).toBe(1);
  });

  it('replays a validation failure as the same 400', async () => {
    const key = unique('key-');
    const path = `${locationPath(ORG, unique('loc_'))}/paymethods`;
    const first = await post(path, { card: { ...CARD, account_number: '1' } }, withKey(key));
    const again = await post(path, { card: { ...CARD, account_number: '1' } }, withKey(key));
    expectError(first, 400);
    expect(again.status).toBe(400);
    expect(again.body).toEqual(first.body);
  });
});
