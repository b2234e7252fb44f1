import { setTimeout as sleep } from 'node:timers/promises';
import { ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { LEGACY_PAYMETHOD_LIST_KEY_ATTRIBUTES, keys } from './keys.ts';
import { PAYMETHOD_ENTITY, paymethodFromItem } from './paymethod-item.ts';
import { isConditionFailure } from './write-conflicts.ts';

type Item = Record<string, unknown>;

/**
 * One-off migration of paymethod items written before the location and
 * organization lists moved to gsi8/gsi9 (`npm run migrate:list-indexes`, not
 * a request path, hence the Scan): each such item gets its gsi8/gsi9 keys and
 * loses its gsi1/gsi2 ones in one conditional UpdateItem (no version change:
 * no member changes, so no domain event either). Idempotent and resumable:
 * migrated items no longer match the scan's filter. `itemsPerSecond` bounds
 * the writes, because each one also deletes the item's entry under its
 * organization's old gsi2 key, which takes at most 1,000 writes a second.
 */
export async function migratePaymethodListKeys(
  client: DynamoDBDocumentClient,
  tableName: string,
  options: { segments: number; itemsPerSecond: number },
): Promise<{ scanned: number; migrated: number }> {
  const counts = { scanned: 0, migrated: 0 };
  const interval = 1000 / options.itemsPerSecond;
  let nextSlot = Date.now();
  const pace = async () => {
    const wait = nextSlot - Date.now();
    nextSlot = Math.max(nextSlot, Date.now()) + interval;
    if (wait > 0) await sleep(wait);
  };
  const legacy = LEGACY_PAYMETHOD_LIST_KEY_ATTRIBUTES;
  const segment = async (index: number) => {
    let startKey: Item | undefined;
    do {
      const page = await client.send(
        new ScanCommand({
          TableName: tableName,
          Segment: index,
          TotalSegments: options.segments,
          FilterExpression: `entity = :paymethod AND (${legacy.map((name) => `attribute_exists(${name})`).join(' OR ')} OR attribute_not_exists(gsi9pk))`,
          ExpressionAttributeValues: { ':paymethod': PAYMETHOD_ENTITY },
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      );
      counts.scanned += page.ScannedCount ?? 0;
      for (const item of page.Items ?? []) {
        await pace();
        const record = paymethodFromItem(item);
        const listKeys: Item = {
          ...keys.paymethodByOrganization(record.organization_id, record.created_at, record.paymethod_token),
          ...(record.location_id ? keys.paymethodByLocation(record.organization_id, record.location_id, record.created_at, record.paymethod_token) : {}),
        };
        const names = Object.keys(listKeys);
        try {
          await client.send(
            new UpdateCommand({
              TableName: tableName,
              Key: keys.paymethod(record.paymethod_token),
              UpdateExpression: `SET ${names.map((name) => `${name} = :${name}`).join(', ')} REMOVE ${legacy.join(', ')}`,
              ConditionExpression: 'entity = :paymethod',
              ExpressionAttributeValues: { ':paymethod': PAYMETHOD_ENTITY, ...Object.fromEntries(names.map((name) => [`:${name}`, listKeys[name]])) },
            }),
          );
          counts.migrated += 1;
        } catch (error) {
          // Deleted meanwhile: nothing left to migrate.
          if (!isConditionFailure(error)) throw error;
        }
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  };
  await Promise.all(Array.from({ length: options.segments }, (_unused, index) => segment(index)));
  return counts;
}
