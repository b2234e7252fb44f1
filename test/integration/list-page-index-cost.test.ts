import { randomBytes } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import type { PaymethodQuery } from '#shared/domain/paymethods/ports.ts';
import type { paymethodItem } from '#shared/store/paymethod-item.ts';
import type { DynamoPaymethodReads } from '#shared/store/paymethod-reads.ts';
import { useRuntimeEnvironment } from '../support/api.ts';
import { unique } from '../support/paymethods.ts';

/**
 * A bare page_index (no cursor) costs about one page: pages 10 and 50 of a
 * 2,600-record list read at most twice what page 0 reads, and give the same
 * records as following the cursors of links.next from page 0, also after
 * records were created in between. Capacity is counted by a middleware on a
 * DynamoDB client this test owns (every call the store makes: list Queries,
 * the page-boundary Query and its writes).
 */
const PAGE_SIZE = 50;
const RECORDS = 2_600;
const PAGES_MEASURED = [0, 10, 50] as const;
const RUN = randomBytes(5).toString('hex');

describe('bare page_index cost', () => {
  const org = unique('org_pages');
  const LOCATION = 'loc_pages';
  let store: DynamoPaymethodReads;
  let documentClient: DynamoDBDocumentClient;
  let tableName: string;
  let itemOf: typeof paymethodItem;
  const spent = { read: 0, write: 0 };

  let sequence = 0;
  function record(): Paymethod {
    sequence += 1;
    // Tokens unique to this run: other files seed tokens of the same shape into the same table at the same time.
    const token = `mth_${RUN}${String(sequence).padStart(12, '0')}`;
    const created = new Date(Date.UTC(2025, 0, 1) + sequence * 1000).toISOString();
    return {
      paymethod_token: token,
      organization_id: org,
      location_id: LOCATION,
      paymethod_type: 'card',
      card: { card_type: 'visa', name_on_card: 'Seed Card', last_4_account_number: '1111', masked_account_number: '****1111', expire_month: 12, expire_year: 2031 },
      is_default: false,
      created_at: created,
      updated_at: created,
      version: 1,
    };
  }
  const secret = { v: 1 as const, key_id: 'arn:aws:kms:us-east-1:000000000000:key/seed', encrypted_data_key: new Uint8Array(184), iv: new Uint8Array(12), ciphertext: new Uint8Array(16), tag: new Uint8Array(16) };

  async function seed(count: number): Promise<void> {
    const batches: Paymethod[][] = [];
    const records = Array.from({ length: count }, record);
    for (let index = 0; index < records.length; index += 25) batches.push(records.slice(index, index + 25));
    const worker = async () => {
      for (let batch = batches.shift(); batch; batch = batches.shift()) {
        let requests = batch.map((item) => ({ PutRequest: { Item: itemOf(item, secret) } }));
        while (requests.length > 0) {
          const result = await documentClient.send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
          requests = (result.UnprocessedItems?.[tableName] ?? []) as typeof requests;
        }
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
  }

  async function page(pageIndex: number, cursor?: string) {
    const before = { ...spent };
    const query: PaymethodQuery = { organizationId: org, locationId: LOCATION };
    const result = await store.list(query, { pageSize: PAGE_SIZE, pageIndex, ...(cursor ? { cursor } : {}) });
    return { tokens: result.items.map((item) => item.paymethod_token), next: result.nextCursor, read: spent.read - before.read, write: spent.write - before.write };
  }
  /** The records following links.next from page 0 gives, page by page, right now. */
  async function followCursors(lastPage: number): Promise<string[][]> {
    const pages: string[][] = [];
    let cursor: string | undefined;
    for (let index = 0; index <= lastPage; index += 1) {
      const result = await page(index, cursor);
      pages.push(result.tokens);
      cursor = result.next;
    }
    return pages;
  }

  beforeAll(async () => {
    const environment = useRuntimeEnvironment();
    tableName = environment.TABLE_NAME as string;
    const base = new DynamoDBClient({
      region: environment.AWS_REGION,
      endpoint: environment.AWS_ENDPOINT_URL_DYNAMODB,
      credentials: { accessKeyId: environment.AWS_ACCESS_KEY_ID as string, secretAccessKey: environment.AWS_SECRET_ACCESS_KEY as string },
    });
    base.middlewareStack.add(
      (next, context) => async (args) => {
        (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
        const result = await next(args);
        const consumed = (result.output as { ConsumedCapacity?: { CapacityUnits?: number } | Array<{ CapacityUnits?: number }> }).ConsumedCapacity;
        const units = [consumed ?? []].flat().reduce((sum, entry) => sum + (entry.CapacityUnits ?? 0), 0);
        if (/^(Put|Update|Delete|BatchWrite|TransactWrite)/.test(context.commandName ?? '')) spent.write += units;
        else spent.read += units;
        return result;
      },
      { step: 'initialize', name: 'countConsumedCapacity' },
    );
    documentClient = DynamoDBDocumentClient.from(base);
    itemOf = (await import('#shared/store/paymethod-item.ts')).paymethodItem;
    store = new (await import('#shared/store/paymethod-reads.ts')).DynamoPaymethodReads(documentClient, tableName);
    await seed(RECORDS);
  }, 180_000);

  it(`reads at most twice page 0 at pages 10 and 50 (${RECORDS} records, page size ${PAGE_SIZE}), the records links.next gives`, async () => {
    const expected = await followCursors(51);

    // A client jumping straight to page 50 of a query nobody paged yet pays the skip once.
    const firstJump = await page(50);
    expect(firstJump.tokens).toEqual(expected[50]);

    const measured: Record<number, Awaited<ReturnType<typeof page>>> = {};
    for (const index of PAGES_MEASURED) measured[index] = await page(index);
    const report = PAGES_MEASURED.map((index) => `page ${index}: ${measured[index]!.read} RCU, ${measured[index]!.write} WCU`).join('; ');
    console.log(`bare page_index cost (${RECORDS} records, page size ${PAGE_SIZE}): first jump to page 50: ${firstJump.read} RCU, ${firstJump.write} WCU; then ${report}`);
    for (const index of PAGES_MEASURED) expect(measured[index]!.tokens, `page ${index}`).toEqual(expected[index]);
    expect(measured[10]!.read).toBeLessThanOrEqual(2 * measured[0]!.read);
    expect(measured[50]!.read).toBeLessThanOrEqual(2 * measured[0]!.read);

    // A client walking bare page_index 0, 1, 2, ... (as existing clients do) gets every record once, in order.
    const walked: string[][] = [];
    let walkRead = 0;
    for (let index = 0; index <= 51; index += 1) {
      const result = await page(index);
      walked.push(result.tokens);
      walkRead += result.read;
    }
    expect(walked).toEqual(expected);
    console.log(`bare page_index walk of pages 0-51: ${walkRead} RCU in all (${(walkRead / 52).toFixed(1)} a page)`);
  }, 240_000);

  it('reads a page of 100 for about twice what a page of 50 reads', async () => {
    const query: PaymethodQuery = { organizationId: org, locationId: LOCATION };
    const costOf = async (pageSize: number) => {
      const before = spent.read;
      const result = await store.list(query, { pageSize, pageIndex: 0 });
      expect(result.items).toHaveLength(pageSize);
      return spent.read - before;
    };
    const fifty = await costOf(50);
    const hundred = await costOf(100);
    console.log(`list page cost: page of 50 ${fifty} RCU, page of 100 ${hundred} RCU`);
    expect(hundred).toBeLessThanOrEqual(2 * fifty + 1);
  });

  it('gives the records links.next gives after records were created, still at about one page', async () => {
    await page(10);
    await page(50);
    await seed(7);
    const expected = await followCursors(51);
    const zero = await page(0);
    for (const index of [10, 50]) {
      const shifted = await page(index);
      expect(shifted.tokens, `page ${index}`).toEqual(expected[index]);
      expect(shifted.read, `page ${index}`).toBeLessThanOrEqual(2 * zero.read);
      console.log(`bare page_index ${index} after 7 creates: ${shifted.read} RCU (page 0: ${zero.read} RCU)`);
    }
    expect((await page(60)).tokens).toEqual([]);
  }, 240_000);
});
