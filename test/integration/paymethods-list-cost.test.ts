import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { AU_SHARDS } from '#shared/store/keys.ts';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import type { PaymethodQuery } from '#shared/domain/paymethods/ports.ts';
import type { dynamo as DynamoClient } from '#shared/aws/dynamodb.ts';
import type { paymethodItem } from '#shared/store/paymethod-item.ts';
import type { DynamoPaymethodReads } from '#shared/store/paymethod-reads.ts';
import { useRuntimeEnvironment } from '../support/api.ts';
import { capacityRecordingClient } from '../support/consumed-capacity.ts';
import { unique } from '../support/paymethods.ts';

/**
 * A page costs the same whatever else is in the table: the same page read
 * from a table holding 100 and 10,000 paymethods of other customers,
 * locations and organizations consumes the same read capacity and reads the
 * same number of items. Items are seeded with BatchWrite in the real layout.
 */
describe('list cost does not grow with the table', () => {
  const org = unique('org_cost');
  const otherOrg = unique('org_cost');
  const TARGET_LOCATION = 'loc_target0000';
  const TARGET_CUSTOMER = 'cst_target0000';
  let tableName: string;
  let modules: {
    dynamo: typeof DynamoClient;
    DynamoPaymethodReads: typeof DynamoPaymethodReads;
    paymethodItem: typeof paymethodItem;
  };

  let sequence = 0;
  function record(organizationId: string, locationId: string, customerToken: string, auDate?: string): Paymethod {
    sequence += 1;
    const token = `mth_${String(sequence).padStart(22, '0')}`;
    const created = new Date(Date.UTC(2025, 0, 1) + sequence * 1000).toISOString();
    return {
      paymethod_token: token,
      organization_id: organizationId,
      location_id: locationId,
      customer_token: customerToken,
      paymethod_type: 'card',
      card: { card_type: 'visa', name_on_card: 'Seed Card', last_4_account_number: '1111', masked_account_number: '****1111', expire_month: 12, expire_year: 2031, ...(auDate ? { au_code: 'new', au_description: 'New account number', au_updated_date: auDate } : {}) },
      is_default: false,
      created_at: created,
      updated_at: created,
      version: 1,
    };
  }
  const secret = { v: 1 as const, key_id: 'arn:aws:kms:us-east-1:000000000000:key/seed', encrypted_data_key: new Uint8Array(184), iv: new Uint8Array(12), ciphertext: new Uint8Array(16), tag: new Uint8Array(16) };

  async function seed(records: Paymethod[]): Promise<void> {
    const batches: Paymethod[][] = [];
    for (let index = 0; index < records.length; index += 25) batches.push(records.slice(index, index + 25));
    const worker = async () => {
      for (let batch = batches.shift(); batch; batch = batches.shift()) {
        let requests = batch.map((item) => ({ PutRequest: { Item: modules.paymethodItem(item, secret) } }));
        while (requests.length > 0) {
          const result = await modules.dynamo.send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
          requests = (result.UnprocessedItems?.[tableName] ?? []) as typeof requests;
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
  }

  /** Noise: same shape and size as the target items, in other locations, customers and another organization. */
  function noise(count: number): Paymethod[] {
    return Array.from({ length: count }, (_value, index) => {
      const id = String(index % 97).padStart(6, '0');
      const inOtherOrg = index % 2 === 0;
      return record(inOtherOrg ? otherOrg : org, `loc_other${id}`, `cst_other${id}`, index % 3 === 0 ? '2025-06-15T10:00:00.000Z' : undefined);
    });
  }

  async function measure(query: PaymethodQuery, pages = 2): Promise<{ capacity: number; items: number; results: number[] }> {
    const { client, reads: reports } = capacityRecordingClient();
    const store = new modules.DynamoPaymethodReads(client, tableName);
    const results: number[] = [];
    let cursor: string | undefined;
    for (let pageIndex = 0; pageIndex < pages; pageIndex += 1) {
      const page = await store.list(query, { pageSize: 50, pageIndex, ...(cursor ? { cursor } : {}) });
      results.push(page.items.length);
      cursor = page.nextCursor;
    }
    return { capacity: reports.reduce((sum, report) => sum + (report.consumedCapacity ?? 0), 0), items: reports.reduce((sum, report) => sum + (report.scannedCount ?? 0), 0), results };
  }

  const QUERIES: Record<string, PaymethodQuery> = {
    customer: { organizationId: org, locationId: TARGET_LOCATION, customerToken: TARGET_CUSTOMER },
    location: { organizationId: org, locationId: TARGET_LOCATION },
    organization: { organizationId: org, locationId: TARGET_LOCATION }, // org-level list with the location filter
    auReport: { organizationId: org, auUpdatedFrom: '2025-05-01T00:00:00', auUpdatedTo: '2025-05-31T23:59:59' },
  };

  beforeAll(async () => {
    const environment = useRuntimeEnvironment();
    tableName = environment.TABLE_NAME as string;
    modules = {
      dynamo: (await import('#shared/aws/dynamodb.ts')).dynamo,
      DynamoPaymethodReads: (await import('#shared/store/paymethod-reads.ts')).DynamoPaymethodReads,
      paymethodItem: (await import('#shared/store/paymethod-item.ts')).paymethodItem,
    };
    // 80 target paymethods (more than a page) for one customer at one location, all updated in May.
    await seed(Array.from({ length: 80 }, () => record(org, TARGET_LOCATION, TARGET_CUSTOMER, '2025-05-20T08:00:00.000Z')));
  }, 120_000);

  it('reads the same for 100 and for 10,000 other paymethods', async () => {
    await seed(noise(100));
    const small: Record<string, Awaited<ReturnType<typeof measure>>> = {};
    for (const [name, query] of Object.entries(QUERIES)) small[name] = await measure(query);

    await seed(noise(9_900));
    for (const [name, query] of Object.entries(QUERIES)) {
      const large = await measure(query);
      expect(large.results, name).toEqual([50, 30]);
      expect(large.items, name).toBe(small[name]!.items);
      expect(large.capacity, name).toBe(small[name]!.capacity);
      // 50 + 1 look-ahead, then the remaining 30: the target items only. The Account Updater report is
      // write-sharded: each shard reads ahead on its own, so a page may read up to a page per shard, never more.
      // The location lists (keys-only gsi8) read the index entries, then the 50 + 30 items of the two pages.
      if (name === 'auReport') expect(large.items, name).toBeLessThanOrEqual(81 + AU_SHARDS * 51);
      else if (name === 'customer') expect(large.items, name).toBe(81);
      else expect(large.items, name).toBe(81 + 80);
      console.log(`list cost ${name}: ${large.capacity} RCU, ${large.items} items read for two pages (100 vs 10,000 other paymethods)`);
    }
  }, 120_000);
});
