import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { IndexDefinition } from '#shared/store/table.ts';
import { TABLE_KEY } from '#shared/store/table.ts';

/**
 * A table of the test's own on DynamoDB Local, keyed like the records' table,
 * with the indexes given: a layout from before an upgrade, or one holding a
 * retired index beside its successor to compare the two.
 */
export async function createTableWithIndexes(client: DynamoDBClient, tableName: string, indexes: readonly IndexDefinition[]): Promise<void> {
  const keyAttributes = [...new Set([TABLE_KEY.partitionKey, TABLE_KEY.sortKey, ...indexes.flatMap((index) => [index.partitionKey, index.sortKey])])];
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: keyAttributes.map((name) => ({ AttributeName: name, AttributeType: 'S' })),
      KeySchema: [{ AttributeName: TABLE_KEY.partitionKey, KeyType: 'HASH' }, { AttributeName: TABLE_KEY.sortKey, KeyType: 'RANGE' }],
      GlobalSecondaryIndexes: indexes.map((index) => ({
        IndexName: index.indexName,
        KeySchema: [{ AttributeName: index.partitionKey, KeyType: 'HASH' }, { AttributeName: index.sortKey, KeyType: 'RANGE' }],
        Projection: index.projection === 'ALL' ? { ProjectionType: 'ALL' } : { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.projection] },
      })),
    }),
  );
}
