import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { png } from '../fixtures/documents.ts';
import { call, MERCHANT, useRuntimeEnvironment } from '../support/api.ts';
import type { Identity } from '../support/api.ts';
import { documentsPath, runtimeStores, upload } from '../support/documents.ts';
import type { RuntimeStores } from '../support/documents.ts';
import { createCard, linksOf, locationPath, unique } from '../support/paymethods.ts';

/**
 * A cursor is plain base64url JSON: a caller can decode one from links.next,
 * change it and send it back. The query fingerprint it carries still matches,
 * so the list must check what the cursor names before DynamoDB sees it as a
 * start key or a bound; a key DynamoDB refuses would be a 5xx.
 */
const ORG = MERCHANT.organizationId;

function edited(cursor: string, change: (decoded: Record<string, unknown>) => void): string {
  const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;
  change(decoded);
  return Buffer.from(JSON.stringify(decoded), 'utf8').toString('base64url');
}

const cursorOf = (answer: { body: Record<string, unknown> }) => new URL(linksOf(answer).next!).searchParams.get('cursor')!;

describe('an edited paymethod list cursor is a 400, never a 5xx', () => {
  it('on a location list', async () => {
    const loc = unique('loc_');
    for (let index = 0; index < 2; index += 1) await createCard(ORG, loc, undefined);
    const list = `${locationPath(ORG, loc)}/paymethods?page_size=1`;
    const cursor = cursorOf(await call(list));
    expect((await call(`${list}&page_index=1&cursor=${cursor}`)).status).toBe(200);
    for (const sortValue of ['', 'x#mth_abc', '2026-01-01T00:00:00.000Z#mth_someoneelse']) {
      const answer = await call(`${list}&page_index=1&cursor=${edited(cursor, (decoded) => (decoded.s = sortValue))}`);
      expect(answer.status, `${JSON.stringify(sortValue)}: ${answer.text}`).toBe(400);
      expect(answer.body.response).toMatchObject({ response_code: 'INVALID_CURSOR' });
    }
    // Page 1 counts pages of the cursor's size: sent back with another, it names the wrong place.
    const resized = await call(`${locationPath(ORG, loc)}/paymethods?page_size=2&page_index=1&cursor=${cursor}`);
    expect(resized.status, resized.text).toBe(400);
    expect(resized.body.response).toMatchObject({ response_code: 'INVALID_CURSOR' });
  });

  it('on the Account Updater report, its position outside the range or not one the index holds', async () => {
    const environment = useRuntimeEnvironment();
    const { paymethodStore } = await import('../support/paymethod-store.ts');
    const { dynamo } = await import('#shared/aws/dynamodb.ts');
    const store = paymethodStore(dynamo, environment.TABLE_NAME!);
    const loc = unique('loc_');
    for (let index = 0; index < 3; index += 1) {
      const token = (await createCard(ORG, loc, undefined)).paymethod_token as string;
      const found = (await store.findCards([token])).get(token)!;
      const card = { ...found.paymethod.card!, au_code: 'exp' as const, au_description: 'New expiration date', au_updated_date: `2021-05-1${index}T10:00:00.000Z` };
      expect(await store.applyAccountUpdates([{ current: found.paymethod, card, source: { file_id: 'edited-cursor', line: 2, run_id: 'edited-cursor', before: { card: found.paymethod.card! } }, updatedAt: card.au_updated_date }])).toEqual(['applied']);
    }
    const report = `${locationPath(ORG, loc)}/paymethods?start_au_updated_date=2021-05-01&end_au_updated_date=2021-05-31&page_size=1`;
    const cursor = cursorOf(await call(report));
    expect((await call(`${report}&page_index=1&cursor=${cursor}`)).status).toBe(200);
    const token = (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { t: string }).t;
    for (const sortValue of [`2000-01-01T00:00:00.000Z#${token}`, `2021-06-01T00:00:00.000Z#${token}`, '']) {
      const answer = await call(`${report}&page_index=1&cursor=${edited(cursor, (decoded) => (decoded.s = sortValue))}`);
      expect(answer.status, `${JSON.stringify(sortValue)}: ${answer.text}`).toBe(400);
      expect(answer.body.response).toMatchObject({ response_code: 'INVALID_CURSOR' });
    }
  });
});

describe('an edited document list cursor is a 400, never a 5xx', () => {
  let stores: RuntimeStores;
  let org: Identity;
  beforeAll(async () => {
    stores = runtimeStores();
    org = await stores.freshOrganization();
    for (let index = 0; index < 3; index += 1) {
      // One resource_id each: the same bytes twice for one resource_id are a duplicate.
      expect((await upload(org, { resource: 'application', resource_id: `app_${index}` }, { name: 'a.png', contentType: 'image/png', bytes: png })).status).toBe(201);
    }
  });
  afterAll(() => stores?.destroy());

  it.each([
    ['an empty table sort key', (key: Record<string, string>) => (key.sk = '')],
    ['an empty index sort key', (key: Record<string, string>) => (key.gsi1sk = '')],
    ['an empty table partition key', (key: Record<string, string>) => (key.pk = '')],
    ['another document in the table key than in the index key', (key: Record<string, string>) => (key.pk = `${key.pk!.slice(0, -3)}zzz`)],
    ['an index sort key that is not a time and a document', (key: Record<string, string>) => (key.gsi1sk = 'DOC#yesterday')],
  ])('%s', async (_label, change) => {
    const list = `${documentsPath(org.organizationId)}?page_size=1`;
    const cursor = cursorOf(await call(list, { as: org }));
    expect((await call(`${list}&page_index=1&cursor=${cursor}`, { as: org })).status).toBe(200);
    const answer = await call(`${list}&page_index=1&cursor=${edited(cursor, (decoded) => change(decoded.k as Record<string, string>))}`, { as: org });
    expect(answer.status, answer.text).toBe(400);
    expect(answer.body.response).toMatchObject({ response_code: 'INVALID_CURSOR' });
  });

  it('a position outside the date range', async () => {
    const list = `${documentsPath(org.organizationId)}?page_size=1&start_received_date=2020-01-01&end_received_date=2099-12-31`;
    const first = await call(list, { as: org });
    expect(first.status, first.text).toBe(200);
    const cursor = cursorOf(first);
    const answer = await call(`${list}&page_index=1&cursor=${edited(cursor, (decoded) => {
      const key = decoded.k as Record<string, string>;
      key.gsi1sk = key.gsi1sk!.replace(/^DOC#\d{4}/, 'DOC#2100');
    })}`, { as: org });
    expect(answer.status, answer.text).toBe(400);
  });

  it('a cursor sent back with another page_size', async () => {
    const cursor = cursorOf(await call(`${documentsPath(org.organizationId)}?page_size=2`, { as: org }));
    expect((await call(`${documentsPath(org.organizationId)}?page_size=2&page_index=1&cursor=${cursor}`, { as: org })).status).toBe(200);
    const answer = await call(`${documentsPath(org.organizationId)}?page_size=1&page_index=1&cursor=${cursor}`, { as: org });
    expect(answer.status, answer.text).toBe(400);
    expect(answer.body.response).toMatchObject({ response_code: 'INVALID_CURSOR', errors: [{ field: 'cursor' }] });
  });
});
