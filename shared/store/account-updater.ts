import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AccountUpdateHistory, AccountUpdateLog, AccountUpdateRecord, FileApplications } from '#shared/domain/account-updater/ports.ts';
import { batchGet, batchWrite } from './batch.ts';
import { AU_SHARDS, auHistoryPartition, auShards, keys, withoutKeys } from './keys.ts';
import { mergeSorted } from './merge-sorted.ts';
import { itemsOf } from './partition.ts';
import { TTL_ATTRIBUTE } from '../platform/table.ts';
import { isConditionFailure } from './write-conflicts.ts';

/** History and month markers are kept about 13 months, then DynamoDB's TTL removes them. */
export const HISTORY_RETENTION_SECONDS = 400 * 24 * 3600;
type Item = Record<string, unknown>;

/** Where the history lives. */
export interface HistoryTables {
  /** The history table (shared/platform/table.ts): every write goes here. */
  history: string;
  /**
   * The paymethod table, where history and month markers were written before
   * the history table existed: the export still reads those months there
   * (Query, never written again; TTL empties them within 400 days).
   */
  legacy?: string;
}

/**
 * The Account Updater's own items: the history of applied rows (write-sharded
 * by token, written in batches after the cards) and the month markers the
 * export starts from, in their own table. Cards are the paymethod
 * repository's; keys come from keys.ts, like every other item.
 */
export class DynamoAccountUpdaterStore implements AccountUpdateLog, AccountUpdateHistory, FileApplications {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tables: HistoryTables,
  ) {}

  async markMonth(month: string, organizationId: string): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.tables.history,
        Item: { ...keys.auMonth(month, organizationId), entity: 'au-month', month, organization_id: organizationId, [TTL_ATTRIBUTE]: expiry() },
      }),
    );
  }

  /** A put if absent, kept as long as the history; otherwise a consistent read of the time recorded. */
  async firstApplied(fileId: string, appliedAt: string): Promise<string> {
    const key = keys.auFile(fileId);
    try {
      await this.client.send(
        new PutCommand({ TableName: this.tables.history, Item: { ...key, entity: 'au-file', applied_at: appliedAt, [TTL_ATTRIBUTE]: expiry() }, ConditionExpression: 'attribute_not_exists(pk)' }),
      );
      return appliedAt;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const { Item } = await this.client.send(new GetCommand({ TableName: this.tables.history, Key: key, ConsistentRead: true }));
      return (Item?.applied_at as string | undefined) ?? appliedAt;
    }
  }

  async claimDelivery(objectKey: string, sequencer: string, runId: string): Promise<boolean> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tables.history,
          Item: { ...keys.auDelivery(objectKey, sequencer), entity: 'au-delivery', run_id: runId, [TTL_ATTRIBUTE]: deliveryExpiry() },
          ConditionExpression: 'attribute_not_exists(pk) OR run_id = :run',
          ExpressionAttributeValues: { ':run': runId },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Unconditional puts: the key is the update's identity, so a retried batch writes the same items again. */
  async record(updates: ReadonlyArray<{ line: number; update: AccountUpdateRecord }>): Promise<void> {
    await this.put(updates.map(historyItem));
  }

  /**
   * A consistent batchGet of the keys alone, then puts of the missing ones.
   * Nothing else writes these keys by then: the run that applied the rows
   * has ended, and a run of the same file writes only missing items.
   */
  async restore(updates: ReadonlyArray<{ line: number; update: AccountUpdateRecord }>): Promise<void> {
    const idOf = (item: Item) => `${String(item.pk)}|${String(item.sk)}`;
    const wanted = new Map(updates.map(historyItem).map((item) => [idOf(item), item]));
    const present = await batchGet(this.client, this.tables.history, [...wanted.values()].map(({ pk, sk }) => ({ pk, sk })), { consistentRead: true, projection: 'pk, sk' });
    for (const item of present) wanted.delete(idOf(item));
    await this.put([...wanted.values()]);
  }

  private async put(items: readonly Item[]): Promise<void> {
    await batchWrite(this.client, this.tables.history, items.map((Item) => ({ PutRequest: { Item } })));
  }

  /** Both tables' markers merged on the sort key (`ORG#<id>`), each organization once. */
  async *organizationsWithUpdates(month: string): AsyncIterable<string> {
    const partition = keys.auMonth(month, '').pk;
    const markers = [this.tables.history, ...(this.tables.legacy ? [this.tables.legacy] : [])].map((table) => this.itemsOf(table, partition));
    let previous: string | undefined;
    for await (const item of mergeSorted(markers, sortKeyOf)) {
      if (item.sk === previous) continue;
      previous = item.sk as string;
      yield item.organization_id as string;
    }
  }

  /**
   * The shards of the month (and, in the legacy table, whatever the month
   * left there) merged on the sort key, `<date>#<token>#<line>`: the order of
   * one unsharded partition. A card's items are all in one shard; of those
   * with the same date (one run), only the highest line is the update the
   * card shows, so only it is returned.
   */
  async *updatesOf(organizationId: string, month: string): AsyncIterable<AccountUpdateRecord> {
    const partitions = [
      // The history table was sharded from its first item; only the legacy table has an unsharded partition too.
      ...Array.from({ length: AU_SHARDS }, (_unused, shard) => ({ table: this.tables.history, partition: auHistoryPartition(organizationId, month, shard) })),
      ...(this.tables.legacy ? auShards().map((shard) => ({ table: this.tables.legacy!, partition: auHistoryPartition(organizationId, month, shard) })) : []),
    ];
    let pending: Item | undefined;
    for await (const item of mergeSorted(partitions.map(({ table, partition }) => this.itemsOf(table, partition)), sortKeyOf)) {
      if (pending && updateOf(pending.sk as string) !== updateOf(item.sk as string)) yield toRecord(pending);
      pending = item;
    }
    if (pending) yield toRecord(pending);
  }

  private itemsOf(tableName: string, key: string): AsyncGenerator<Item, void, undefined> {
    return itemsOf(this.client, { tableName, keyAttribute: 'pk', key, order: 'ascending' });
  }
}

function historyItem({ line, update }: { line: number; update: AccountUpdateRecord }): Item {
  return {
    ...keys.auHistory(update.organization_id, update.au_updated_date.slice(0, 7), update.au_updated_date, update.paymethod_token, line),
    entity: 'au-history',
    ...update,
    [TTL_ATTRIBUTE]: expiry(),
  };
}

const sortKeyOf = (item: Item): string => item.sk as string;

/** `<date>#<token>` of a history sort key: one card's update in one run. */
function updateOf(sortKey: string): string {
  return sortKey.slice(0, sortKey.lastIndexOf('#'));
}

function toRecord(item: Item): AccountUpdateRecord {
  const { entity: _entity, ...record } = withoutKeys(item);
  return record as unknown as AccountUpdateRecord;
}

function expiry(): number {
  return Math.ceil(Date.now() / 1000) + HISTORY_RETENTION_SECONDS;
}

/** A second delivery of an upload comes within hours (EventBridge gives up after 2); inbox files live 7 days. */
const DELIVERY_RETENTION_SECONDS = 7 * 24 * 3600;

function deliveryExpiry(): number {
  return Math.ceil(Date.now() / 1000) + DELIVERY_RETENTION_SECONDS;
}
