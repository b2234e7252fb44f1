import { setTimeout as sleep } from 'node:timers/promises';
import { CreateTableCommand, DescribeTableCommand, UpdateTableCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import type { CreateTableCommandInput, DynamoDBClient, KeySchemaElement } from '@aws-sdk/client-dynamodb';
import type { IndexDefinition } from '#shared/platform/table.ts';
import { GLOBAL_SECONDARY_INDEXES, RETIRED_INDEXES, TABLE_KEY, TABLE_STREAM_VIEW, TTL_ATTRIBUTE } from '#shared/platform/table.ts';

const STREAM = { StreamEnabled: true, StreamViewType: TABLE_STREAM_VIEW } as const;

/**
 * Creates the single table with the same keys, indexes and stream the CDK
 * stack declares (a table kept in LOCAL_DATA_DIR from before the stream
 * existed gets it now), and answers the stream's ARN.
 */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<{ streamArn: string }> {
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    await addMissingIndexes(client, tableName, new Set((Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName)));
    if (Table?.StreamSpecification?.StreamEnabled && Table.StreamSpecification.StreamViewType === TABLE_STREAM_VIEW && Table.LatestStreamArn) {
      return { streamArn: Table.LatestStreamArn };
    }
    const { TableDescription } = await client.send(new UpdateTableCommand({ TableName: tableName, StreamSpecification: STREAM }));
    return { streamArn: required(TableDescription?.LatestStreamArn) };
  } catch (error) {
    if ((error as Error).name !== 'ResourceNotFoundException') throw error;
  }
  const { TableDescription } = await client.send(new CreateTableCommand({ ...recordsTableDefinition(tableName, GLOBAL_SECONDARY_INDEXES), StreamSpecification: STREAM }));
  await enableTtl(client, tableName);
  return { streamArn: required(TableDescription?.LatestStreamArn) };
}

/**
 * The records' table keyed as the stack declares it, with the indexes given:
 * the current ones here; a layout from before an upgrade, or retired indexes
 * beside their successors, in tests.
 */
export function recordsTableDefinition(tableName: string, indexes: readonly IndexDefinition[]): CreateTableCommandInput {
  const attributeNames = [...new Set([TABLE_KEY.partitionKey, TABLE_KEY.sortKey, ...indexes.flatMap((index) => [index.partitionKey, index.sortKey])])];
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: attributeNames.map((name) => ({ AttributeName: name, AttributeType: 'S' })),
    KeySchema: keySchema(TABLE_KEY),
    GlobalSecondaryIndexes: indexes.map(indexDefinition),
  };
}

/**
 * A log-like table as the stack declares it, keys and TTL, no index, no
 * stream: the Account Updater's history (AU_HISTORY_TABLE_KEY) and the webhook
 * deliveries (WEBHOOK_TABLE_KEY) are keyed alike.
 */
export async function ensurePlainTable(client: DynamoDBClient, tableName: string, key: { partitionKey: string; sortKey: string }): Promise<void> {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
    return;
  } catch (error) {
    if ((error as Error).name !== 'ResourceNotFoundException') throw error;
  }
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [key.partitionKey, key.sortKey].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
      KeySchema: keySchema(key),
    }),
  );
  await enableTtl(client, tableName);
}

function keySchema(key: { partitionKey: string; sortKey: string }): KeySchemaElement[] {
  return [
    { AttributeName: key.partitionKey, KeyType: 'HASH' },
    { AttributeName: key.sortKey, KeyType: 'RANGE' },
  ];
}

/** Every table's items expire on TTL_ATTRIBUTE, as in the stack. */
async function enableTtl(client: DynamoDBClient, tableName: string): Promise<void> {
  await client.send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true } }));
}

function required(streamArn: string | undefined): string {
  if (!streamArn) throw new Error('DynamoDB Local created the table without a stream');
  return streamArn;
}

function indexDefinition(index: IndexDefinition) {
  return {
    IndexName: index.indexName,
    KeySchema: keySchema(index),
    Projection: index.projection === 'ALL' ? { ProjectionType: 'ALL' as const } : { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: [...index.projection] },
  };
}

/**
 * A table kept in LOCAL_DATA_DIR from before an index existed gets it now
 * (paymethods written before gsi8/gsi9 get their keys from
 * `npm run migrate:list-indexes`), and loses the retired indexes its
 * successors replace (the functions never read a retired index here). Like
 * DynamoDB, DynamoDB Local changes one index at a time, in the background:
 * each change waits for the one before it.
 */
async function addMissingIndexes(client: DynamoDBClient, tableName: string, existing: Set<string | undefined>): Promise<void> {
  for (const index of GLOBAL_SECONDARY_INDEXES) {
    if (existing.has(index.indexName)) continue;
    await oneIndexChange(
      client,
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [
          { AttributeName: index.partitionKey, AttributeType: 'S' },
          { AttributeName: index.sortKey, AttributeType: 'S' },
        ],
        GlobalSecondaryIndexUpdates: [{ Create: indexDefinition(index) }],
      }),
    );
  }
  const retired: string[] = RETIRED_INDEXES.filter((index) => existing.has(index.indexName)).map((index) => index.indexName);
  for (const indexName of retired) {
    await oneIndexChange(client, new UpdateTableCommand({ TableName: tableName, GlobalSecondaryIndexUpdates: [{ Delete: { IndexName: indexName } }] }));
  }
  // DynamoDB Local deletes in the background: the runtime starts on the table it declares, not on one still changing.
  for (let waited = 0; retired.length > 0; waited += 100) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (!(Table?.GlobalSecondaryIndexes ?? []).some((index) => retired.includes(index.IndexName as string))) return;
    if (waited >= 60_000) throw new Error(`DynamoDB Local did not delete ${retired.join(', ')} within a minute`);
    await sleep(100);
  }
}

/** An index change, sent again while the one before it is still under way ("Only 1 online index can be created or deleted simultaneously"). */
async function oneIndexChange(client: DynamoDBClient, command: UpdateTableCommand): Promise<void> {
  for (let waited = 0; ; waited += 100) {
    try {
      await client.send(command);
      return;
    } catch (error) {
      if ((error as Error).name !== 'LimitExceededException' || waited >= 60_000) throw error;
      await sleep(100);
    }
  }
}
