import { setTimeout as sleep } from 'node:timers/promises';
import { BatchGetCommand, BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

type Item = Record<string, unknown>;

/** BatchGetItem's limit of keys per request. */
const BATCH_GET_KEYS = 100;
/** Attempts at a batch call whose unprocessed part keeps coming back (throttling). */
export const MAX_BATCH_ATTEMPTS = 8;

/** Jittered exponential pause before a batch call's next attempt, at most 2 s. */
export function backoff(attempt: number): Promise<void> {
  const ms = Math.min(2_000, 25 * 2 ** attempt) * (0.5 + Math.random() / 2);
  return sleep(ms);
}

/**
 * The items of one table at `keys` (distinct keys): BatchGetItem in requests
 * of 100, sent together, unprocessed keys retried with backoff. Missing items
 * are absent; the order is DynamoDB's.
 */
export async function batchGet(client: Pick<DynamoDBDocumentClient, 'send'>, tableName: string, keys: readonly Item[], options: { consistentRead: boolean; projection?: string }): Promise<Item[]> {
  const requests: Item[][] = [];
  for (let index = 0; index < keys.length; index += BATCH_GET_KEYS) requests.push(keys.slice(index, index + BATCH_GET_KEYS));
  const found = await Promise.all(
    requests.map(async (request) => {
      const items: Item[] = [];
      let pending = request;
      for (let attempt = 1; pending.length > 0; attempt += 1) {
        if (attempt > MAX_BATCH_ATTEMPTS) throw new Error(`BatchGetItem left ${pending.length} keys unprocessed after ${MAX_BATCH_ATTEMPTS} attempts`);
        if (attempt > 1) await backoff(attempt);
        const result = await client.send(
          new BatchGetCommand({ RequestItems: { [tableName]: { Keys: pending, ConsistentRead: options.consistentRead, ...(options.projection ? { ProjectionExpression: options.projection } : {}) } } }),
        );
        items.push(...(result.Responses?.[tableName] ?? []));
        pending = (result.UnprocessedKeys?.[tableName]?.Keys ?? []) as Item[];
      }
      return items;
    }),
  );
  return found.flat();
}

/** BatchWriteItem's limit of requests per call. */
const BATCH_WRITE_REQUESTS = 25;

type WriteRequest = { PutRequest: { Item: Item } } | { DeleteRequest: { Key: Item } };

/**
 * Writes to one table in BatchWriteItem calls of 25, one after another,
 * unprocessed requests retried with backoff. Unconditional: for writes that
 * may be repeated (keys that name what they hold).
 */
export async function batchWrite(client: Pick<DynamoDBDocumentClient, 'send'>, tableName: string, requests: readonly WriteRequest[]): Promise<void> {
  for (let first = 0; first < requests.length; first += BATCH_WRITE_REQUESTS) {
    let pending: WriteRequest[] = requests.slice(first, first + BATCH_WRITE_REQUESTS);
    for (let attempt = 1; pending.length > 0; attempt += 1) {
      if (attempt > MAX_BATCH_ATTEMPTS) throw new Error(`BatchWriteItem left ${pending.length} items unprocessed after ${MAX_BATCH_ATTEMPTS} attempts`);
      if (attempt > 1) await backoff(attempt);
      const result = await client.send(new BatchWriteCommand({ RequestItems: { [tableName]: pending } }));
      pending = (result.UnprocessedItems?.[tableName] ?? []) as WriteRequest[];
    }
  }
}
