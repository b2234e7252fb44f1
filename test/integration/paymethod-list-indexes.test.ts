import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import type { PaymethodQuery } from '#shared/domain/paymethods/ports.ts';
import type * as Store from '#shared/store/paymethod-item.ts';
import type { PaymethodStore } from '../support/paymethod-store.ts';
import type * as Migration from '#shared/store/list-index-migration.ts';
import { call, MERCHANT, useRuntimeEnvironment } from '../support/api.ts';
import { createCard, customerPath, locationPath, resultsOf, unique } from '../support/paymethods.ts';

/**
 * The location and organization lists read keys-only indexes (gsi8, gsi9),
 * the report, customer_id and fingerprint lists read indexes that carry only
 * what they filter on (gsi10 to gsi13), and each then reads the page's items: an Account
 * Updater expiry touches none of the list, customer_id or fingerprint
 * entries, yet every list shows what it changed; items stored before the
 * list indexes existed are listed once migrated.
 */
type Consumed = { GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }> };

describe('paymethod list indexes', () => {
  let store: PaymethodStore;
  let measuredStore: PaymethodStore;
  let documentClient: DynamoDBDocumentClient;
  let tableName: string;
  let module: typeof Store;
  let migration: typeof Migration;
  const indexWrites: Consumed[] = [];

  beforeAll(async () => {
    const environment = useRuntimeEnvironment();
    tableName = environment.TABLE_NAME as string;
    module = await import('#shared/store/paymethod-item.ts');
    const { paymethodStore } = await import('../support/paymethod-store.ts');
    migration = await import('#shared/store/list-index-migration.ts');
    const { dynamo } = await import('#shared/aws/dynamodb.ts');
    documentClient = dynamo;
    store = paymethodStore(dynamo, tableName);
    // A client of the test's own that records which indexes each write touched.
    const base = new DynamoDBClient({});
    base.middlewareStack.add(
      (next, context) => async (args) => {
        const write = /^(Put|Update|Delete|BatchWrite|TransactWrite)/.test(context.commandName ?? '');
        if (write) (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'INDEXES';
        const result = await next(args);
        if (write) indexWrites.push(...[(result.output as { ConsumedCapacity?: Consumed | Consumed[] }).ConsumedCapacity ?? []].flat());
        return result;
      },
      { step: 'initialize', name: 'recordIndexWrites' },
    );
    measuredStore = paymethodStore(DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } }), tableName);
  });

  /** Applies an expiry update through the repository's Account Updater port; answers the indexes it wrote. */
  async function accountUpdate(token: string, expiry: { expire_month: number; expire_year: number }): Promise<string[]> {
    const found = (await store.findCards([token])).get(token)!;
    const card = { ...found.paymethod.card!, ...expiry, au_code: 'exp' as const, au_description: 'New expiration date', au_updated_date: new Date().toISOString() };
    indexWrites.length = 0;
    expect(await measuredStore.applyAccountUpdates([{ current: found.paymethod, card, source: { file_id: 'lists', line: 2, run_id: 'lists', before: { card: found.paymethod.card! } }, updatedAt: card.au_updated_date }])).toEqual(['applied']);
    return indexWrites.flatMap((entry) => Object.entries(entry.GlobalSecondaryIndexes ?? {}).filter(([, units]) => (units.CapacityUnits ?? 0) > 0).map(([name]) => name));
  }

  it('shows an Account Updater change in every list, without writing a list index entry', async () => {
    const org = MERCHANT.organizationId;
    const loc = unique('loc_');
    const cst = unique('cst_');
    const older = await createCard(org, loc, cst);
    const made = await createCard(org, loc, cst, { customer_id: 'CID-LIST' });
    const token = made.paymethod_token as string;

    const touched = await accountUpdate(token, { expire_month: 7, expire_year: 2034 });
    // Neither the lists nor the customer_id and fingerprint indexes carry anything an expiry changes.
    for (const untouched of ['gsi8', 'gsi9', 'gsi12', 'gsi13']) expect(touched).not.toContain(untouched);
    expect(touched).toEqual(expect.arrayContaining(['gsi10', 'gsi11'])); // the report indexes: the card's keys are new

    const fingerprint = (made.card as { fingerprint: string }).fingerprint;
    const filter = (expression: string) => `filter=${encodeURIComponent(expression)}`;
    const lists = [
      `${locationPath(org, loc)}/paymethods`,
      `${locationPath(org, loc)}/paymethods?paymethod_type=card`,
      customerPath(org, loc, cst),
      `/v3/organizations/${org}/paymethods?location_id=${loc}`,
      `/v3/organizations/${org}/paymethods?location_id=${loc}&paymethod_type=card`,
      // The same card number: both cards share the fingerprint.
      `${locationPath(org, loc)}/paymethods?${filter(`fingerprint eq '${fingerprint}'`)}`,
    ];
    for (const path of lists) {
      const answer = await call(path);
      expect(answer.status, `${path}: ${answer.text}`).toBe(200);
      const results = resultsOf(answer);
      expect(results.map((item) => item.paymethod_token), path).toEqual([token, older.paymethod_token]);
      expect(results[0]?.card, path).toMatchObject({ expire_month: 7, expire_year: 2034, au_code: 'exp', au_description: 'New expiration date' });
      expect(results[1]?.card, path).toMatchObject({ expire_month: 12, expire_year: 2031 });
      expect(results[1]?.card, path).not.toHaveProperty('au_code');
    }
    expect(resultsOf(await call(`${locationPath(org, loc)}/paymethods?paymethod_type=echeck`))).toEqual([]);

    // Lists that hold only the updated card: by merchant customer id, and the Account Updater report.
    const today = new Date().toISOString().slice(0, 10);
    const range = `start_au_updated_date eq '${today}' and end_au_updated_date eq '${today}'`;
    const report = filter(range);
    for (const path of [
      `/v3/organizations/${org}/paymethods?customer_id=CID-LIST`,
      // The organization is shared with other suites: narrowed by this test's own customer id and location.
      `/v3/organizations/${org}/paymethods?customer_id=CID-LIST&${report}`,
      `/v3/organizations/${org}/paymethods?location_id=${loc}&${report}`,
      `${locationPath(org, loc)}/paymethods?${filter(`${range} and fingerprint eq '${fingerprint}'`)}`,
      `${customerPath(org, loc, cst)}?${report}`,
    ]) {
      const answer = await call(path);
      expect(answer.status, `${path}: ${answer.text}`).toBe(200);
      expect(resultsOf(answer).map((item) => item.paymethod_token), path).toEqual([token]);
      expect(resultsOf(answer)[0]?.card, path).toMatchObject({ expire_month: 7, expire_year: 2034, au_code: 'exp' });
    }
  });

  describe('the organization list', () => {
    const org = unique('org_lists');
    let sequence = 0;
    const secret = { v: 1 as const, key_id: 'arn:aws:kms:us-east-1:000000000000:key/seed', encrypted_data_key: new Uint8Array(184), iv: new Uint8Array(12), ciphertext: new Uint8Array(16), tag: new Uint8Array(16) };
    function record(type: 'card' | 'echeck', location: string | undefined): Paymethod {
      sequence += 1;
      const created = new Date(Date.UTC(2025, 0, 1) + sequence * 1000).toISOString();
      const token = `mth_${org.slice(-12)}${String(sequence).padStart(10, '0')}`;
      return {
        paymethod_token: token,
        organization_id: org,
        ...(location ? { location_id: location } : {}),
        paymethod_type: type,
        ...(type === 'card'
          ? { card: { card_type: 'visa', name_on_card: 'Seed Card', last_4_account_number: '1111', masked_account_number: '****1111', expire_month: 12, expire_year: 2031 } }
          : { echeck: { account_holder: 'Seed Holder', last_4_account_number: '0123', masked_account_number: '****0123', routing_number: '021000021', account_type: 'checking', sec_code: 'WEB' } }),
        is_default: false,
        created_at: created,
        updated_at: created,
        version: 1,
      } as Paymethod;
    }
    const tokensOf = (page: { items: Paymethod[] }) => page.items.map((item) => item.paymethod_token);
    const records = [record('card', 'loc_a'), record('echeck', 'loc_a'), record('card', undefined), record('card', 'loc_b'), record('echeck', undefined), record('card', 'loc_a')];
    const newestFirst = [...records].reverse().map((item) => item.paymethod_token);

    beforeAll(async () => {
      await documentClient.send(new BatchWriteCommand({ RequestItems: { [tableName]: records.map((item) => ({ PutRequest: { Item: module.paymethodItem(item, item.paymethod_type === 'card' ? secret : undefined) } })) } }));
    });

    it('lists, filters and pages as before (cursor walk and bare page_index agree)', async () => {
      const query: PaymethodQuery = { organizationId: org };
      expect(tokensOf(await store.list(query, { pageSize: 50, pageIndex: 0 }))).toEqual(newestFirst);
      const cards = records.filter((item) => item.paymethod_type === 'card').reverse().map((item) => item.paymethod_token);
      expect(tokensOf(await store.list({ ...query, paymethodType: 'card' }, { pageSize: 50, pageIndex: 0 }))).toEqual(cards);
      expect(tokensOf(await store.list({ ...query, locationId: 'loc_a', paymethodType: 'echeck' }, { pageSize: 50, pageIndex: 0 }))).toEqual([records[1]!.paymethod_token]);

      const walked: string[] = [];
      let cursor: string | undefined;
      for (let pageIndex = 0; pageIndex < 3; pageIndex += 1) {
        const page = await store.list(query, { pageSize: 2, pageIndex, ...(cursor ? { cursor } : {}) });
        expect(tokensOf(page), `page ${pageIndex}`).toEqual(newestFirst.slice(pageIndex * 2, pageIndex * 2 + 2));
        expect(tokensOf(await store.list(query, { pageSize: 2, pageIndex })), `bare page ${pageIndex}`).toEqual(tokensOf(page));
        walked.push(...tokensOf(page));
        cursor = page.nextCursor;
        expect(cursor === undefined, `page ${pageIndex}`).toBe(pageIndex === 2);
      }
      expect(walked).toEqual(newestFirst);
    });

    it('shows the new expiry after an Account Updater update, in a card stored before the list indexes once migrated', async () => {
      const updated = records[3]!.paymethod_token;
      expect(await accountUpdate(updated, { expire_month: 3, expire_year: 2035 })).not.toContain('gsi9');
      const page = await store.list({ organizationId: org }, { pageSize: 50, pageIndex: 0 });
      expect(page.items.find((item) => item.paymethod_token === updated)?.card).toMatchObject({ expire_month: 3, expire_year: 2035, au_code: 'exp' });

      // A card written in the former layout: its list keys under gsi1/gsi2, none under gsi8/gsi9.
      const legacy = record('card', 'loc_a');
      const { gsi8pk: gsi1pk, gsi8sk: gsi1sk, gsi9pk: gsi2pk, gsi9sk: gsi2sk, ...rest } = module.paymethodItem(legacy, secret);
      await documentClient.send(new PutCommand({ TableName: tableName, Item: { ...rest, gsi1pk, gsi1sk, gsi2pk, gsi2sk } }));
      expect(tokensOf(await store.list({ organizationId: org }, { pageSize: 50, pageIndex: 0 }))).not.toContain(legacy.paymethod_token);

      const migrated = await migration.migratePaymethodListKeys(documentClient, tableName, { segments: 2, itemsPerSecond: 900 });
      expect(migrated.migrated).toBeGreaterThanOrEqual(1);
      expect(tokensOf(await store.list({ organizationId: org }, { pageSize: 50, pageIndex: 0 }))).toEqual([legacy.paymethod_token, ...newestFirst]);
      expect(tokensOf(await store.list({ organizationId: org, locationId: 'loc_a' }, { pageSize: 50, pageIndex: 0 }))[0]).toBe(legacy.paymethod_token);
      const stored = (await documentClient.send(new GetCommand({ TableName: tableName, Key: { pk: `MTH#${legacy.paymethod_token}`, sk: 'MTH' } }))).Item!;
      for (const name of ['gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk']) expect(stored, name).not.toHaveProperty(name);
      expect(stored).toMatchObject({ gsi9pk: `ORG#${org}#MTH`, gsi8pk: `LOC#${org}#loc_a#MTH`, version: 1 });
      // Nothing left to do the second time.
      expect((await migration.migratePaymethodListKeys(documentClient, tableName, { segments: 2, itemsPerSecond: 900 })).migrated).toBe(0);
    });
  });
});
