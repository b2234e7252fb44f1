import { randomBytes } from 'node:crypto';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import type { PaymethodQuery } from '#shared/domain/paymethods/ports.ts';
import type { PaymethodStore } from '../support/paymethod-store.ts';
import { GLOBAL_SECONDARY_INDEXES, RETIRED_INDEXES } from '#shared/platform/table.ts';
import { useRuntimeEnvironment } from '../support/api.ts';
import { capacityRecordingClient } from '../support/consumed-capacity.ts';
import { createTableWithIndexes } from '../support/tables.ts';

/**
 * What a page of the Account Updater report reads from the narrow report
 * indexes (gsi10, gsi11) against the ALL indexes they replaced (gsi4, gsi5),
 * on one table of the test's own that holds both, read through the same
 * store (the retired index standing in, as during an upgrade): the same
 * records, pages and cursors, and the read units of each; and how many index
 * entries a page reads from the 9 partitions the report merges.
 */
const CARDS = 600;
const PAGE_SIZE = 50;
const RUN = randomBytes(5).toString('hex');

describe('report page cost', () => {
  useRuntimeEnvironment();
  const tableName = `report-cost-${RUN}`;
  const org = `org_report${RUN}`;
  const location = 'loc_report';
  const raw = new DynamoDBClient({});
  const { client, reads } = capacityRecordingClient();
  let narrow: PaymethodStore;
  let retired: PaymethodStore;
  const secret = { v: 1 as const, key_id: 'arn:aws:kms:us-east-1:000000000000:key/seed', encrypted_data_key: new Uint8Array(184), iv: new Uint8Array(12), ciphertext: new Uint8Array(16), tag: new Uint8Array(16) };

  beforeAll(async () => {
    const module = await import('#shared/store/paymethod-item.ts');
    const { paymethodStore } = await import('../support/paymethod-store.ts');
    await createTableWithIndexes(raw, tableName, [...GLOBAL_SECONDARY_INDEXES, ...RETIRED_INDEXES]);
    narrow = paymethodStore(client, tableName);
    retired = paymethodStore(client, tableName, 'gsi10=gsi4,gsi11=gsi5');
    // Cards as merchants keep them (a customer, a customer id, a label), each then changed by the Account Updater.
    const cards: Paymethod[] = Array.from({ length: CARDS }, (_unused, index) => {
      const created = new Date(Date.UTC(2025, 0, 1) + index * 1000).toISOString();
      return {
        paymethod_token: `mth_${RUN}${String(index).padStart(12, '0')}`,
        organization_id: org,
        location_id: location,
        customer_token: `cst_${RUN}${index % 200}`,
        customer_id: `CID-${index % 200}`,
        paymethod_type: 'card',
        label: 'Corporate card, travel and lodging',
        card: { card_type: 'visa', name_on_card: 'Seed Cardholder', last_4_account_number: '1111', masked_account_number: '****1111', expire_month: 12, expire_year: 2031 },
        is_default: false,
        created_at: created,
        updated_at: created,
        version: 1,
      } as Paymethod;
    });
    for (let index = 0; index < cards.length; index += 25) {
      const requests = cards.slice(index, index + 25).map((card) => ({ PutRequest: { Item: module.paymethodItem(card, secret) } }));
      await client.send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
    }
    for (let index = 0; index < cards.length; index += 100) {
      const changes = cards.slice(index, index + 100).map((current, offset) => {
        const applied = new Date(Date.UTC(2026, 4, 1) + (index + offset) * 60_000).toISOString();
        return { current, card: { ...current.card!, expire_year: 2034, au_code: 'exp' as const, au_description: 'New expiration date', au_updated_date: applied }, source: { file_id: 'cost', line: index + offset + 2, run_id: 'cost', before: { card: current.card! } }, updatedAt: applied };
      });
      expect(new Set(await narrow.applyAccountUpdates(changes))).toEqual(new Set(['applied']));
    }
  });

  afterAll(async () => {
    await raw.send(new DeleteTableCommand({ TableName: tableName }));
  });

  async function walk(store: PaymethodStore, query: PaymethodQuery, pages: number) {
    const walked: Array<{ tokens: string[]; readUnits: number }> = [];
    let cursor: string | undefined;
    for (let pageIndex = 0; pageIndex < pages; pageIndex += 1) {
      reads.length = 0;
      const page = await store.list(query, { pageSize: PAGE_SIZE, pageIndex, ...(cursor ? { cursor } : {}) });
      walked.push({ tokens: page.items.map((item) => item.paymethod_token), readUnits: reads.reduce((sum, read) => sum + (read.consumedCapacity ?? 0), 0) });
      cursor = page.nextCursor;
    }
    return walked;
  }

  it.each([
    ['organization', { organizationId: org, auUpdatedFrom: '2026-05-01', auUpdatedTo: '2026-05-31' }],
    ['location', { organizationId: org, locationId: location, auUpdatedFrom: '2026-05-01', auUpdatedTo: '2026-05-31' }],
  ] as const)('%s report: the same pages from the narrow index as from the ALL index it replaced', async (_name, query) => {
    const fromNarrow = await walk(narrow, query, 3);
    const fromRetired = await walk(retired, query, 3);
    expect(fromNarrow.map((page) => page.tokens)).toEqual(fromRetired.map((page) => page.tokens));
    expect(fromNarrow.flatMap((page) => page.tokens)).toHaveLength(3 * PAGE_SIZE);
    // The narrow entries are cheap to read, but a page then reads its items (one BatchGetItem): docs/data-model.md weighs it.
    console.info(`report page of ${PAGE_SIZE} (${_name}, ${CARDS} cards), read units, pages 0 to 2: narrow ${fromNarrow.map((page) => page.readUnits).join(', ')}; ALL ${fromRetired.map((page) => page.readUnits).join(', ')}`);
  });

  it('reads about a page of index entries for any page: the first, one by cursor, a bare page_index once its boundaries are known', async () => {
    const query = { organizationId: org, auUpdatedFrom: '2026-05-01', auUpdatedTo: '2026-05-31' };
    const entriesRead = () => reads.filter((read) => read.operation === 'Query').reduce((sum, read) => sum + (read.scannedCount ?? 0), 0);
    const read = async (pageIndex: number, cursor?: string) => {
      reads.length = 0;
      const page = await narrow.list(query, { pageSize: PAGE_SIZE, pageIndex, ...(cursor ? { cursor } : {}) });
      return { page, entries: entriesRead() };
    };
    const walked = [await read(0)];
    for (let index = 1; index <= 6; index += 1) walked.push(await read(index, walked.at(-1)!.page.nextCursor));
    const tokens = (page: (typeof walked)[number]['page']) => page.items.map((item) => item.paymethod_token);

    const firstBare = await read(6); // skips the pages before it once, remembering their boundaries
    const bare = await read(6);
    const pastTheEnd = [await read(100), await read(100)];
    expect(tokens(firstBare.page)).toEqual(tokens(walked[6]!.page));
    expect(tokens(bare.page)).toEqual(tokens(walked[6]!.page));
    expect(pastTheEnd.map((answer) => answer.page.items)).toEqual([[], []]);
    console.info(
      `report page of ${PAGE_SIZE} over 9 partitions (${CARDS} cards), index entries read: page 0 ${walked[0]!.entries}, page 6 by cursor ${walked[6]!.entries}, ` +
        `bare page 6 first ${firstBare.entries} then ${bare.entries}, bare page 100 first ${pastTheEnd[0]!.entries} then ${pastTheEnd[1]!.entries}`,
    );
    // A page is its entries plus each partition's look-ahead, not a page from each of the 9 partitions.
    for (const answer of [walked[0]!, walked[6]!, bare, pastTheEnd[1]!]) expect(answer.entries).toBeLessThanOrEqual(2 * (PAGE_SIZE + 1) + 9 * 2);
  });
});
