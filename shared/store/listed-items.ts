/**
 * Items an organization lists while they are active (credentials, publishable
 * keys): each carries its list entries as index keys (keys.ts), newest first
 * by their sort key, and revoking takes the entries away. The item stays, so
 * a revoked id is never issued again.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient, PutCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Conflict } from '#shared/domain/errors.ts';
import { allItemsOf } from './partition.ts';
import { isConditionFailure } from './write-conflicts.ts';
import { GLOBAL_SECONDARY_INDEXES } from '../platform/table.ts';

type Item = Record<string, unknown>;

/** Puts a new item; `taken()` when its key is in use (or the put's own ConditionExpression, which replaces that one, refuses it). */
export async function putNew(client: DynamoDBDocumentClient, put: PutCommandInput, taken: () => Conflict): Promise<void> {
  try {
    await client.send(new PutCommand({ ConditionExpression: 'attribute_not_exists(pk)', ...put }));
  } catch (error) {
    if (isConditionFailure(error)) throw taken();
    throw error;
  }
}

/** Every active item of one list, newest first: `listKey` is the list entry (index keys) of any of its items. */
export async function listedNewestFirst(client: DynamoDBDocumentClient, tableName: string, listKey: Record<string, string>): Promise<Item[]> {
  const index = GLOBAL_SECONDARY_INDEXES.find((candidate) => candidate.partitionKey in listKey);
  if (!index) throw new Error(`no index is keyed by any of ${Object.keys(listKey).join(', ')}`);
  return allItemsOf(client, { tableName, indexName: index.indexName, keyAttribute: index.partitionKey, key: listKey[index.partitionKey]!, order: 'descending' });
}

/**
 * Marks the item revoked (kept for the record, the first revocation's time
 * kept) and removes its list entries, in one write; false when there is no
 * such item.
 */
export async function revokeListed(client: DynamoDBDocumentClient, tableName: string, key: Item, listEntries: ReadonlyArray<Record<string, string>>, now: Date): Promise<boolean> {
  const entryAttributes = listEntries.flatMap((entry) => Object.keys(entry));
  try {
    await client.send(
      new UpdateCommand({
        TableName: tableName,
        Key: key,
        UpdateExpression: `SET revoked_at = if_not_exists(revoked_at, :now) REMOVE ${entryAttributes.join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':now': now.toISOString() },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}
