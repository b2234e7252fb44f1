import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Conflict } from '#shared/domain/errors.ts';
import type { Organization, OrganizationStore } from '#shared/domain/tenancy.ts';
import { keys, withoutKeys } from './keys.ts';
import { putNew } from './listed-items.ts';

export class DynamoOrganizationStore implements OrganizationStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(organizationId: string): Promise<Organization | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: keys.organization(organizationId) }));
    return Item ? (withoutKeys(Item) as Organization) : undefined;
  }

  async create(organization: Organization): Promise<void> {
    await putNew(
      this.client,
      { TableName: this.tableName, Item: { ...keys.organization(organization.organization_id), ...organization } },
      () => new Conflict('ORGANIZATION_EXISTS', `organization ${organization.organization_id} already exists`),
    );
  }
}

/** How long a container keeps an organization (its parent, for tenancy checks). */
export const ORGANIZATION_CACHE_MS = 60_000;

/**
 * Parentage changes rarely and is read on every partner request, so each
 * container keeps answers for a minute.
 */
export class CachedOrganizationStore implements OrganizationStore {
  private readonly cache = new Map<string, { value: Organization | undefined; expiresAt: number }>();

  constructor(
    private readonly inner: OrganizationStore,
    private readonly ttlMs = ORGANIZATION_CACHE_MS,
    private readonly clock: () => number = Date.now,
  ) {}

  async get(organizationId: string): Promise<Organization | undefined> {
    const hit = this.cache.get(organizationId);
    if (hit && hit.expiresAt > this.clock()) return hit.value;
    const value = await this.inner.get(organizationId);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(organizationId, { value, expiresAt: this.clock() + this.ttlMs });
    return value;
  }

  async create(organization: Organization): Promise<void> {
    await this.inner.create(organization);
    this.cache.delete(organization.organization_id);
  }
}
