import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

type Item = Record<string, unknown>;

/** One partition key of the table or of one of its indexes. */
export interface Partition {
  tableName: string;
  /** Absent: the table's own keys. */
  indexName?: string;
  /** The partition key's attribute: `pk` on the table, `gsi<n>pk` on an index. */
  keyAttribute: string;
  key: string;
  /** By sort key: oldest first where pages are merged in order (the export), newest first for listings. */
  order: 'ascending' | 'descending';
}

/**
 * Every item under one partition key, a page at a time. For readers that
 * want the whole partition: the monthly export and the operator's listings
 * of credentials and publishable keys. A request's list reads one page of
 * its partition instead (paymethod-reads.ts, documents.ts).
 */
export async function* itemsOf(client: DynamoDBDocumentClient, partition: Partition): AsyncGenerator<Item, void, undefined> {
  let startKey: Item | undefined;
  do {
    const page = await client.send(
      new QueryCommand({
        TableName: partition.tableName,
        ...(partition.indexName ? { IndexName: partition.indexName } : {}),
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': partition.keyAttribute },
        ExpressionAttributeValues: { ':pk': partition.key },
        ScanIndexForward: partition.order === 'ascending',
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      }),
    );
    yield* page.Items ?? [];
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

/** itemsOf, collected. */
export async function allItemsOf(client: DynamoDBDocumentClient, partition: Partition): Promise<Item[]> {
  const items: Item[] = [];
  for await (const item of itemsOf(client, partition)) items.push(item);
  return items;
}
