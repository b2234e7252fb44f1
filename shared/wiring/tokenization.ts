import { dynamo } from '#shared/aws/dynamodb.ts';
import { config } from '#shared/config.ts';
import type { PublishableKey, PublishableKeyStore } from '#shared/domain/publishable-keys.ts';
import { DynamoPublishableKeyStore } from '#shared/store/publishable-keys.ts';

const LOCATION_CACHE_MS = 60_000;
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

let locationKeys: CachedLocationKeys | undefined;
export function publishableKeysByLocation(): CachedLocationKeys {
  locationKeys ??= new CachedLocationKeys(new DynamoPublishableKeyStore(dynamo, config.tableName));
  return locationKeys;
}
