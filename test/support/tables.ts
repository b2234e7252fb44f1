import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { IndexDefinition } from '#shared/platform/table.ts';
import { recordsTableDefinition } from '../../local/provision.ts';

/**
 * A table of the test's own on DynamoDB Local, keyed like the records' table,
 * with the indexes given: a layout from before an upgrade, or one holding a
 * retired index beside its successor to compare the two.
 */
export async function createTableWithIndexes(client: DynamoDBClient, tableName: string, indexes: readonly IndexDefinition[]): Promise<void> {
  await client.send(new CreateTableCommand(recordsTableDefinition(tableName, indexes)));
}
