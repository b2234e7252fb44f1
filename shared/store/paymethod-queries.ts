/**
 * Which index serves a paymethod list, and the Query that reads it: the
 * lists (paymethod-reads.ts) page through it, and a customer's default
 * pointer (customer-defaults.ts) counts and picks from the customer's part.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient, QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { PaymethodQuery } from '#shared/domain/paymethods/ports.ts';
import { auReportPartition, auShards, keys } from './keys.ts';
import type { IndexName, IndexStandIns, RetiredIndexName } from '../platform/table.ts';
import { GLOBAL_SECONDARY_INDEXES, parseIndexStandIns } from '../platform/table.ts';

type Item = Record<string, unknown>;

export interface QueryPlan {
  index: IndexName;
  partitionAttribute: string;
  sortAttribute: string;
  partition: string;
  /** Write-sharded indexes: every partition to merge (newest first); absent for a single partition. */
  shards?: string[];
  from?: string;
  to?: string;
  filters: Array<{ attribute: string; value: string }>;
}

/**
 * Picks the index that serves a list (see docs/data-model.md): the Account
 * Updater range first (sparse indexes keyed by au_updated_date), then the
 * narrowest partition among customer, merchant customer id, location and
 * organization. Remaining filters only thin out that partition, so a page
 * never reads other customers', locations' or organizations' items.
 */
export function planQuery(query: PaymethodQuery): QueryPlan {
  const org = query.organizationId;
  const extra = (entries: Array<[string, string | undefined]>) =>
    entries.filter((entry): entry is [string, string] => entry[1] !== undefined).map(([attribute, value]) => ({ attribute, value }));
  const index = (name: IndexName) => GLOBAL_SECONDARY_INDEXES.find((candidate) => candidate.indexName === name)!;
  const plan = (name: IndexName, partition: string, filters: QueryPlan['filters'], range: Pick<QueryPlan, 'from' | 'to'> = {}): QueryPlan => ({
    index: name,
    partitionAttribute: index(name).partitionKey,
    sortAttribute: index(name).sortKey,
    partition,
    filters,
    ...range,
  });
  const type: Array<[string, string | undefined]> = [['paymethod_type', query.paymethodType]];
  // The fingerprint's partition is the narrowest; on other indexes it filters on its own index key.
  const byFingerprint = query.fingerprint === undefined ? undefined : keys.paymethodByFingerprint(org, query.fingerprint, '', '').gsi7pk;
  if (byFingerprint !== undefined && query.auUpdatedFrom === undefined && query.auUpdatedTo === undefined) {
    return plan('gsi13', byFingerprint, extra([['location_id', query.locationId], ['customer_token', query.customerToken], ['customer_id', query.customerId], ...type]));
  }
  if (byFingerprint !== undefined) type.push(['gsi7pk', byFingerprint]);
  if (query.auUpdatedFrom !== undefined || query.auUpdatedTo !== undefined) {
    // Stored dates are full ISO instants; "\uffff" makes the end second inclusive of its milliseconds.
    const range = { from: query.auUpdatedFrom, to: query.auUpdatedTo === undefined ? undefined : `${query.auUpdatedTo}\uffff` };
    const filters = extra([['customer_token', query.customerToken], ['customer_id', query.customerId], ...type]);
    const location = query.locationId;
    const shards = auShards().map((shard) => auReportPartition(org, location, shard));
    return { ...plan(location ? 'gsi11' : 'gsi10', auReportPartition(org, location, undefined), filters, range), shards };
  }
  if (query.customerToken) {
    return plan('gsi3', keys.paymethodByCustomer(org, query.customerToken, '', '').gsi3pk, extra([['location_id', query.locationId], ['customer_id', query.customerId], ...type]));
  }
  if (query.customerId) return plan('gsi12', keys.paymethodByCustomerId(org, query.customerId, '', '').gsi6pk, extra([['location_id', query.locationId], ...type]));
  if (query.locationId) return plan('gsi8', keys.paymethodByLocation(org, query.locationId, '', '').gsi8pk, extra(type));
  return plan('gsi9', keys.paymethodByOrganization(org, '', '').gsi9pk, extra(type));
}

/**
 * Whether an item, as the table holds it, answers the plan's Query: one of its
 * partitions, its sort key within the range, every filter. An index lags its
 * table, so a record read after its index entry may have moved (another
 * customer_id, a later Account Updater date, a new fingerprint).
 */
export function answersPlan(item: Item, plan: QueryPlan): boolean {
  const sortValue = item[plan.sortAttribute];
  return (
    (plan.shards ?? [plan.partition]).includes(item[plan.partitionAttribute] as string) &&
    typeof sortValue === 'string' &&
    (plan.from === undefined || sortValue >= plan.from) &&
    (plan.to === undefined || sortValue <= plan.to) &&
    plan.filters.every((filter) => item[filter.attribute] === filter.value)
  );
}

/** Queries of the paymethod list indexes, each through the index standing in for it while a stack is upgraded. */
export class PaymethodIndexes {
  private standIns: IndexStandIns | undefined;

  /**
   * @param standInsSetting retired indexes to read in place of successors
   * the table does not have or cannot serve yet (still being filled), as
   * TABLE_INDEX_STAND_INS names them: only while
   * a deployed stack is upgraded (shared/platform/table.ts `RETIRED_INDEXES`). The plan, and
   * so every cursor, keeps the successor's name.
   */
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly standInsSetting?: string,
  ) {}

  async query(plan: QueryPlan, limit: number, startKey: Item | undefined, ascending = false) {
    const names: Record<string, string> = { '#pk': plan.partitionAttribute };
    if (plan.from !== undefined || plan.to !== undefined) names['#sk'] = plan.sortAttribute;
    const values: Record<string, unknown> = { ':pk': plan.partition };
    let keyCondition = '#pk = :pk';
    if (plan.from !== undefined && plan.to !== undefined) keyCondition += ' AND #sk BETWEEN :from AND :to';
    else if (plan.from !== undefined) keyCondition += ' AND #sk >= :from';
    else if (plan.to !== undefined) keyCondition += ' AND #sk <= :to';
    if (plan.from !== undefined) values[':from'] = plan.from;
    if (plan.to !== undefined) values[':to'] = plan.to;
    const filters = plan.filters.map((filter, index) => {
      names[`#f${index}`] = filter.attribute;
      values[`:f${index}`] = filter.value;
      return `#f${index} = :f${index}`;
    });
    const input: QueryCommandInput = {
      TableName: this.tableName,
      IndexName: this.physicalIndex(plan.index),
      KeyConditionExpression: keyCondition,
      ...(filters.length > 0 ? { FilterExpression: filters.join(' AND ') } : {}),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ScanIndexForward: ascending, // lists are newest first; page boundaries read back towards newer items
      Limit: limit,
      ...(startKey ? { ExclusiveStartKey: startKey } : {}),
    };
    return this.client.send(new QueryCommand(input));
  }

  /** The index a plan's Query reads: its own, or a retired one standing in for it (same keys, ALL). */
  physicalIndex(index: IndexName): IndexName | RetiredIndexName {
    // Read at the first list, not in the constructor: a mistaken setting fails the lists, not every route.
    this.standIns ??= parseIndexStandIns(this.standInsSetting);
    return this.standIns[index] ?? index;
  }

  /** How many items the plan's partition holds (an index lags its table); range and filters are not applied. */
  async count(plan: Pick<QueryPlan, 'index' | 'partitionAttribute' | 'partition'>): Promise<number> {
    let count = 0;
    let startKey: Item | undefined;
    do {
      const result = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: this.physicalIndex(plan.index),
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': plan.partitionAttribute },
          ExpressionAttributeValues: { ':pk': plan.partition },
          Select: 'COUNT',
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      );
      count += result.Count ?? 0;
      startKey = result.LastEvaluatedKey;
    } while (startKey);
    return count;
  }
}
