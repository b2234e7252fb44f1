import { setTimeout as sleep } from 'node:timers/promises';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** One index as DynamoDB describes it: readable only once ACTIVE and no longer backfilling. */
export interface IndexState {
  index: string;
  status: string;
  backfilling: boolean;
}

export interface IndexStatus {
  table: string;
  indexes: IndexState[];
  /** Every index can be queried: an upgrade may move reads onto the new ones (docs/operations.md, "Upgrading: indexes"). */
  ready: boolean;
}

/**
 * The table's indexes and whether all can be read. CloudFormation ends a
 * stack update once a new index exists, not once DynamoDB has filled it, so
 * an upgrade asks this before the deploy that reads the new indexes.
 */
export async function indexStatus(client: Pick<DynamoDBClient, 'send'>, tableName: string): Promise<IndexStatus> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  const indexes = (Table?.GlobalSecondaryIndexes ?? [])
    .map((index) => ({ index: index.IndexName ?? '', status: index.IndexStatus ?? 'UNKNOWN', backfilling: index.Backfilling === true }))
    .sort((a, b) => a.index.localeCompare(b.index, 'en', { numeric: true }));
  return { table: tableName, indexes, ready: indexes.every((index) => index.status === 'ACTIVE' && !index.backfilling) };
}

/** Asks again every `intervalMs` until every index can be read, reporting each answer that is not yet ready. */
export async function waitForIndexes(
  client: Pick<DynamoDBClient, 'send'>,
  tableName: string,
  options: { intervalMs: number; onPending?: (status: IndexStatus) => void; sleep?: (ms: number) => Promise<void> },
): Promise<IndexStatus> {
  const pause = options.sleep ?? sleep;
  for (;;) {
    const status = await indexStatus(client, tableName);
    if (status.ready) return status;
    options.onPending?.(status);
    await pause(options.intervalMs);
  }
}
