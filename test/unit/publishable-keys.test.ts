import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AccessDenied, InvalidRequest, NotFound, Throttled } from '#shared/domain/errors.ts';
import type { PublishableKey, PublishableKeyStore, PublishableScope } from '#shared/domain/publishable-keys.ts';
import {
  assertPublishableScope,
  authenticatePublishableKey,
  chargeMintAttempt,
  isOriginAllowedAtLocation,
  issuePublishableKey,
  normalizeOrigin,
  parseBearerPublishableKey,
  revokePublishableKey,
} from '#shared/domain/publishable-keys.ts';
import type { Organization, OrganizationStore } from '#shared/domain/tenancy.ts';
import { CachedLocationKeys } from '#shared/store/publishable-keys.ts';
import { tokenizeDeclarations } from '../../client/build.ts';

const KEY = `pk_${'A'.repeat(32)}`;

class MemoryKeys implements PublishableKeyStore, OrganizationStore {
  keys = new Map<string, PublishableKey>();
  organizations = new Map<string, Organization>([['org_1', { organization_id: 'org_1', created_at: '2026-01-01T00:00:00Z' }]]);
  listCalls = 0;
  async get(id: string): Promise<never> {
    throw new Error(`typed accessors only ${id}`);
  }
  async create(key: PublishableKey): Promise<void> {
    this.keys.set(key.publishable_key, key);
  }
  async listByOrganization(organizationId: string): Promise<PublishableKey[]> {
    return [...this.keys.values()].filter((key) => key.organization_id === organizationId && key.revoked_at === undefined);
  }
  async revoke(id: string, now: Date): Promise<boolean> {
    const key = this.keys.get(id);
    if (!key) return false;
    key.revoked_at ??= now.toISOString();
    return true;
  }
  async listByLocation(organizationId: string, locationId: string): Promise<PublishableKey[]> {
    this.listCalls += 1;
    return [...this.keys.values()].filter((key) => key.organization_id === organizationId && key.location_id === locationId);
  }
  publishableKeys = { get: async (id: string) => this.keys.get(id), create: (key: PublishableKey) => this.create(key), listByLocation: this.listByLocation.bind(this) };
  organizationStore = { get: async (id: string) => this.organizations.get(id), create: async () => {} };
}

const scope: PublishableScope = { publishableKey: KEY, organizationId: 'org_1', locationId: 'loc_1', allowedOrigins: ['https://shop.example'], mintsPerMinute: 2 };

describe('normalizeOrigin', () => {
  it.each([
    ['https://shop.example', 'https://shop.example'],
    ['https://Shop.Example/', 'https://shop.example'],
    ['https://shop.example:443', 'https://shop.example'],
    ['https://shop.example:8443', 'https://shop.example:8443'],
    ['http://localhost:3000', 'http://localhost:3000'],
    ['http://127.0.0.1:3000', 'http://127.0.0.1:3000'],
  ])('accepts %s as %s', (value, origin) => expect(normalizeOrigin(value)).toBe(origin));

  it.each(['http://shop.example', 'https://shop.example/checkout', 'https://shop.example?x=1', 'https://user@shop.example', 'null', '*', 'shop.example', 'ftp://shop.example', ''])(
    'refuses %s',
    (value) => expect(normalizeOrigin(value)).toBeUndefined(),
  );
});

describe('parseBearerPublishableKey', () => {
  it('reads Bearer pk_ keys only', () => {
    expect(parseBearerPublishableKey(`Bearer ${KEY}`)).toBe(KEY);
    expect(parseBearerPublishableKey(`bearer ${KEY}`)).toBe(KEY);
    for (const header of [undefined, '', KEY, `Bearer sk_${'A'.repeat(32)}`, `Bearer pk_short`, `Bearer ${KEY}x`, `Basic ${KEY}`]) {
      expect(parseBearerPublishableKey(header)).toBeUndefined();
    }
  });
});

describe('issuePublishableKey', () => {
  it('issues a random key bound to the organization, location and normalized, de-duplicated origins', async () => {
    const stores = new MemoryKeys();
    const deps = { organizations: stores.organizationStore, publishableKeys: stores.publishableKeys };
    const key = await issuePublishableKey({ organizationId: 'org_1', locationId: 'loc_1', allowedOrigins: ['https://shop.example/', 'https://SHOP.example'] }, deps);
    expect(key).toMatchObject({ organization_id: 'org_1', location_id: 'loc_1', allowed_origins: ['https://shop.example'], mints_per_minute: 30 });
    expect(key.publishable_key).toMatch(/^pk_[A-Za-z0-9]{32}$/);
    const other = await issuePublishableKey({ organizationId: 'org_1', locationId: 'loc_1', allowedOrigins: ['https://shop.example'] }, deps);
    expect(other.publishable_key).not.toBe(key.publishable_key);
  });

  it('lists every problem at once, and needs an existing organization', async () => {
    const stores = new MemoryKeys();
    const deps = { organizations: stores.organizationStore, publishableKeys: stores.publishableKeys };
    const failure = await issuePublishableKey({ organizationId: 'org 1', locationId: 'loc', allowedOrigins: ['http://shop.example'], mintsPerMinute: 0 }, deps).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(InvalidRequest);
    expect((failure as InvalidRequest).issues.map((issue) => issue.field)).toEqual(['organization_id', 'location_id', 'allowed_origins[0]', 'mints_per_minute']);
    await expect(issuePublishableKey({ organizationId: 'org_1', locationId: 'loc_1', allowedOrigins: [] }, deps)).rejects.toBeInstanceOf(InvalidRequest);
    await expect(issuePublishableKey({ organizationId: 'org_2', locationId: 'loc_1', allowedOrigins: ['https://a.example'] }, deps)).rejects.toBeInstanceOf(NotFound);
  });
});

describe('authenticatePublishableKey', () => {
  it('finds a stored, unrevoked key, whatever organization the request names (checked per request, not here)', async () => {
    const stores = new MemoryKeys();
    const key = await issuePublishableKey({ organizationId: 'org_1', locationId: 'loc_1', allowedOrigins: ['https://shop.example'] }, { organizations: stores.organizationStore, publishableKeys: stores.publishableKeys });
    const deps = { publishableKeys: stores.publishableKeys };
    const found = await authenticatePublishableKey({ authorization: `Bearer ${key.publishable_key}` }, deps);
    expect(found).toEqual({ publishableKey: key.publishable_key, organizationId: 'org_1', locationId: 'loc_1', allowedOrigins: ['https://shop.example'], mintsPerMinute: 30 });
    for (const authorization of [`Bearer ${KEY}`, undefined, `Basic ${Buffer.from(`${key.publishable_key}:x`).toString('base64')}`]) {
      expect(await authenticatePublishableKey({ authorization }, deps)).toBeUndefined();
    }
    await revokePublishableKey(key.publishable_key, stores);
    expect(await authenticatePublishableKey({ authorization: `Bearer ${key.publishable_key}` }, deps)).toBeUndefined();
  });
});

describe('assertPublishableScope', () => {
  it("allows the key's own organization, location and origins", () => {
    expect(() => assertPublishableScope(scope, { organizationId: 'org_1', locationId: 'loc_1', origin: 'https://shop.example' })).not.toThrow();
  });

  it.each([
    ['another location', { organizationId: 'org_1', locationId: 'loc_2', origin: 'https://shop.example' }],
    ['another organization', { organizationId: 'org_2', locationId: 'loc_1', origin: 'https://shop.example' }],
    ['no location (an organization-level route)', { organizationId: 'org_1', locationId: undefined, origin: 'https://shop.example' }],
    ['another origin', { organizationId: 'org_1', locationId: 'loc_1', origin: 'https://evil.example' }],
    ['a look-alike origin', { organizationId: 'org_1', locationId: 'loc_1', origin: 'https://shop.example.evil.example' }],
    ['no origin', { organizationId: 'org_1', locationId: 'loc_1', origin: undefined }],
    ['the opaque origin', { organizationId: 'org_1', locationId: 'loc_1', origin: 'null' }],
  ])('refuses %s with AccessDenied', (_name, target) => {
    expect(() => assertPublishableScope(scope, target)).toThrow(AccessDenied);
  });
});

describe('chargeMintAttempt', () => {
  it("throttles past the key's budget with the limiter's Retry-After", async () => {
    let hits = 0;
    const limiter = { hit: async (_key: string, limit: number) => ({ allowed: ++hits <= limit, retryAfterSeconds: 17 }) };
    await chargeMintAttempt(scope, limiter, new Date());
    await chargeMintAttempt(scope, limiter, new Date());
    const refused = await chargeMintAttempt(scope, limiter, new Date()).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Throttled);
    expect((refused as Throttled).retryAfterSeconds).toBe(17);
  });
});

describe('preflight origins', () => {
  it("allow an origin any key of the location allows, and cache the location's keys for a minute", async () => {
    const stores = new MemoryKeys();
    const deps = { organizations: stores.organizationStore, publishableKeys: stores.publishableKeys };
    await issuePublishableKey({ organizationId: 'org_1', locationId: 'loc_1', allowedOrigins: ['https://a.example'] }, deps);
    await issuePublishableKey({ organizationId: 'org_1', locationId: 'loc_1', allowedOrigins: ['https://b.example'] }, deps);
    let now = 0;
    const cached = new CachedLocationKeys(stores.publishableKeys, () => now);
    const allowed = (origin: string | undefined, locationId = 'loc_1') => isOriginAllowedAtLocation({ organizationId: 'org_1', locationId, origin }, cached);
    expect(await allowed('https://a.example')).toBe('https://a.example');
    expect(await allowed('https://B.example/')).toBe('https://b.example');
    expect(await allowed('https://c.example')).toBeUndefined();
    expect(await allowed(undefined)).toBeUndefined();
    expect(await allowed('https://a.example', 'loc_2')).toBeUndefined();
    expect(stores.listCalls).toBe(2);
    now += 61_000;
    await allowed('https://a.example');
    expect(stores.listCalls).toBe(3);
  });
});

describe('client/tokenize.d.ts', () => {
  it('is the declaration output of client/tokenize.ts (run `npm run build:client` after changing the source)', async () => {
    expect(readFileSync(new URL('../../client/tokenize.d.ts', import.meta.url), 'utf8')).toBe(await tokenizeDeclarations());
    // Runs the TypeScript compiler: seconds on a busy machine, not a unit test's default budget.
  }, 60_000);
});
