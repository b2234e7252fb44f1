import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Conflict } from '#shared/domain/errors.ts';
import type { MintRateLimiter, PublishableKey, PublishableKeyStore } from '#shared/domain/publishable-keys.ts';
import { keys, withoutKeys } from './keys.ts';
import { listedNewestFirst, putNew, revokeListed } from './listed-items.ts';
import { isConditionFailure } from './write-conflicts.ts';
import { TTL_ATTRIBUTE } from '../platform/table.ts';

export class DynamoPublishableKeyStore implements PublishableKeyStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(publishableKey: string): Promise<PublishableKey | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: keys.publishableKey(publishableKey), ConsistentRead: true }));
    return Item ? toKey(Item) : undefined;
  }

  async create(key: PublishableKey): Promise<void> {
    await putNew(
      this.client,
      {
        TableName: this.tableName,
        Item: {
          ...keys.publishableKey(key.publishable_key),
          ...keys.publishableKeyByLocation(key.organization_id, key.location_id, key.created_at, key.publishable_key),
          ...keys.publishableKeyByOrganization(key.organization_id, key.created_at, key.publishable_key),
          entity: 'publishable-key',
          ...key,
        },
      },
      () => new Conflict('PUBLISHABLE_KEY_EXISTS', 'publishable key already exists'),
    );
  }

  async listByLocation(organizationId: string, locationId: string): Promise<PublishableKey[]> {
    return (await listedNewestFirst(this.client, this.tableName, keys.publishableKeyByLocation(organizationId, locationId, '', ''))).map(toKey);
  }

  async listByOrganization(organizationId: string): Promise<PublishableKey[]> {
    return (await listedNewestFirst(this.client, this.tableName, keys.publishableKeyByOrganization(organizationId, '', ''))).map(toKey);
  }

  /** Marks it revoked (kept for the record) and takes it out of both lists, in one write. */
  revoke(publishableKey: string, now: Date): Promise<boolean> {
    const lists = [keys.publishableKeyByLocation('', '', '', ''), keys.publishableKeyByOrganization('', '', '')];
    return revokeListed(this.client, this.tableName, keys.publishableKey(publishableKey), lists, now);
  }
}

function toKey(item: Record<string, unknown>): PublishableKey {
  const { entity: _entity, ...rest } = withoutKeys(item);
  return rest as unknown as PublishableKey;
}

/**
 * Fixed one-minute windows in the table: one conditional UpdateItem per attempt,
 * exact across every Lambda container (and identical in the local runtime).
 * A burst of up to twice the limit can straddle a window boundary; that is the
 * usual price of fixed windows and acceptable for abuse control.
 */
export class DynamoMintRateLimiter implements MintRateLimiter {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async hit(publishableKey: string, limit: number, now: Date): Promise<{ allowed: boolean; retryAfterSeconds: number }> {
    const seconds = Math.floor(now.getTime() / 1000);
    const minute = Math.floor(seconds / 60);
    const retryAfterSeconds = Math.max(1, (minute + 1) * 60 - seconds);
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.mintCounter(publishableKey, minute),
          UpdateExpression: 'ADD hits :one SET #ttl = if_not_exists(#ttl, :ttl)',
          ConditionExpression: 'attribute_not_exists(hits) OR hits < :limit',
          ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
          ExpressionAttributeValues: { ':one': 1, ':limit': limit, ':ttl': (minute + 2) * 60 },
        }),
      );
      return { allowed: true, retryAfterSeconds };
    } catch (error) {
      if (isConditionFailure(error)) return { allowed: false, retryAfterSeconds };
      throw error;
    }
  }
}

export const LOCATION_CACHE_MS = 60_000;
const LOCATION_CACHE_ENTRIES = 1_000;

/**
 * Preflights are anonymous, so each container remembers a location's keys for a
 * minute: a flood of preflights costs at most one Query per location per minute
 * per container (browsers also cache a successful preflight for 10 minutes).
 */
export class CachedLocationKeys implements Pick<PublishableKeyStore, 'listByLocation'> {
  private readonly cache = new Map<string, { keys: PublishableKey[]; expiresAt: number }>();

  constructor(
    private readonly store: Pick<PublishableKeyStore, 'listByLocation'>,
    private readonly now: () => number = Date.now,
  ) {}

  async listByLocation(organizationId: string, locationId: string): Promise<PublishableKey[]> {
    const id = `${organizationId}/${locationId}`;
    const hit = this.cache.get(id);
    if (hit && hit.expiresAt > this.now()) return hit.keys;
    const keys = await this.store.listByLocation(organizationId, locationId);
    if (this.cache.size >= LOCATION_CACHE_ENTRIES) this.cache.clear();
    this.cache.set(id, { keys, expiresAt: this.now() + LOCATION_CACHE_MS });
    return keys;
  }
}
