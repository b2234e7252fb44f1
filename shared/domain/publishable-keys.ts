import { AccessDenied, InvalidRequest, NotFound, Throttled } from './errors.ts';
import type { FieldIssue } from './errors.ts';
import { isOrganizationId, randomBase62 } from './ids.ts';
import type { OrganizationStore } from './tenancy.ts';

/**
 * Publishable keys: the credential a merchant embeds in its checkout page so the
 * browser can mint one-time tokens without the merchant's server seeing card
 * numbers. A key is public by design; what bounds it is what it is bound to:
 * one organization, one location, a list of allowed origins, one route
 * (minting, which only writes and returns masked data) and a per-minute budget.
 *
 * Keys are stored by value, not by keyed hash like secure keys: the value is
 * shipped to every browser that opens the checkout, so hashing hides nothing,
 * and an uncached lookup stays one GetItem instead of a KMS call that anyone on
 * the internet could trigger by spraying made-up keys (KMS request quotas are
 * shared with the vault).
 */
export interface PublishableKey {
  publishable_key: string;
  organization_id: string;
  location_id: string;
  /** Normalized origins (`scheme://host[:port]`, lower case, no default port). */
  allowed_origins: string[];
  /** Minting attempts allowed per key per clock minute. */
  mints_per_minute: number;
  created_at: string;
  /** Set by `admin revoke-publishable-key`; a revoked key never authenticates again and is not listed. */
  revoked_at?: string;
}

export interface PublishableKeyStore {
  get(publishableKey: string): Promise<PublishableKey | undefined>;
  /** Fails with Conflict when the key exists (never, with 190 random bits). */
  create(key: PublishableKey): Promise<void>;
  /** Every active key of one location (a handful at most). */
  listByLocation(organizationId: string, locationId: string): Promise<PublishableKey[]>;
  /** Every active key of one organization, newest first: a Query, never a Scan. */
  listByOrganization(organizationId: string): Promise<PublishableKey[]>;
  /** False when no such key exists; revoking twice is harmless. */
  revoke(publishableKey: string, now: Date): Promise<boolean>;
}

/** How `admin list-publishable-keys` shows a key (public by design, so shown whole). */
export interface PublishableKeyListing {
  publishable_key: string;
  organization_id: string;
  location_id: string;
  allowed_origins: string[];
  created_at: string;
}

/** Fixed-window counter: counts one attempt and says whether it is within the limit. */
export interface MintRateLimiter {
  hit(publishableKey: string, limit: number, now: Date): Promise<{ allowed: boolean; retryAfterSeconds: number }>;
}

/** What the authorizer learned about a publishable key, carried to the route. */
export interface PublishableScope {
  publishableKey: string;
  organizationId: string;
  locationId: string;
  allowedOrigins: readonly string[];
  mintsPerMinute: number;
}

export const PUBLISHABLE_KEY_PATTERN = /^pk_[A-Za-z0-9]{32}$/;
export const LOCATION_ID_PATTERN = /^loc_[A-Za-z0-9_-]{1,60}$/;
export const DEFAULT_MINTS_PER_MINUTE = 30;
export const MAX_MINTS_PER_MINUTE = 1000;
const MAX_ORIGINS = 20;

export function isLocationId(value: unknown): value is string {
  return typeof value === 'string' && LOCATION_ID_PATTERN.test(value);
}

/** `Bearer pk_...` (scheme case-insensitive), or undefined for anything else. */
export function parseBearerPublishableKey(header: string | undefined): string | undefined {
  const match = /^Bearer (\S+)$/i.exec(header?.trim() ?? '');
  return match?.[1] && PUBLISHABLE_KEY_PATTERN.test(match[1]) ? match[1] : undefined;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * An origin as browsers send it: `https://host[:port]`, nothing after the host.
 * Plain http only for loopback hosts (local development); a checkout served over
 * http elsewhere would expose card numbers in transit anyway. Returns the
 * canonical form, or undefined when `value` is not such an origin.
 */
export function normalizeOrigin(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) return undefined;
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) return undefined;
  // `https://shop.example/` is accepted as written by hand; a path is not.
  if (value.replace(/\/$/, '').toLowerCase() !== url.origin.toLowerCase() && value.replace(/\/$/, '').toLowerCase() !== `${url.origin}:${defaultPort(url)}`.toLowerCase()) {
    return undefined;
  }
  return url.origin;
}

function defaultPort(url: URL): string {
  return url.protocol === 'https:' ? '443' : '80';
}

/** Issues a publishable key for an existing organization; the location needs no record of its own. */
export async function issuePublishableKey(
  input: { organizationId: string; locationId: string; allowedOrigins: readonly string[]; mintsPerMinute?: number },
  deps: { organizations: OrganizationStore; publishableKeys: Pick<PublishableKeyStore, 'create'> },
  now: Date = new Date(),
): Promise<PublishableKey> {
  const issues: FieldIssue[] = [];
  if (!isOrganizationId(input.organizationId)) issues.push({ field: 'organization_id', message: 'must be org_ followed by 1 to 60 letters, digits, _ or -' });
  if (!isLocationId(input.locationId)) issues.push({ field: 'location_id', message: 'must be loc_ followed by 1 to 60 letters, digits, _ or -' });
  const origins: string[] = [];
  if (input.allowedOrigins.length === 0 || input.allowedOrigins.length > MAX_ORIGINS) {
    issues.push({ field: 'allowed_origins', message: `must list 1 to ${MAX_ORIGINS} origins` });
  }
  input.allowedOrigins.forEach((value, index) => {
    const origin = normalizeOrigin(value);
    if (!origin) issues.push({ field: `allowed_origins[${index}]`, message: 'must be an origin such as https://shop.example (http only for localhost), without a path' });
    else if (!origins.includes(origin)) origins.push(origin);
  });
  const limit = input.mintsPerMinute ?? DEFAULT_MINTS_PER_MINUTE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_MINTS_PER_MINUTE) {
    issues.push({ field: 'mints_per_minute', message: `must be an integer from 1 to ${MAX_MINTS_PER_MINUTE}` });
  }
  if (issues.length > 0) throw new InvalidRequest(issues);
  if (!(await deps.organizations.get(input.organizationId))) throw new NotFound(`organization ${input.organizationId} does not exist`);
  const key: PublishableKey = {
    publishable_key: `pk_${randomBase62(32)}`,
    organization_id: input.organizationId,
    location_id: input.locationId,
    allowed_origins: origins,
    mints_per_minute: limit,
    created_at: now.toISOString(),
  };
  await deps.publishableKeys.create(key);
  return key;
}

/**
 * The authorizer's check: a well-formed key that exists and is not revoked,
 * undefined otherwise. Nothing here depends on the organization header, the
 * origin or the path, so the answer may be cached on the Authorization header;
 * those are checked per request against the scope.
 */
export async function authenticatePublishableKey(
  request: { authorization: string | undefined },
  deps: { publishableKeys: Pick<PublishableKeyStore, 'get'> },
): Promise<PublishableScope | undefined> {
  const value = parseBearerPublishableKey(request.authorization);
  if (!value) return undefined;
  const stored = await deps.publishableKeys.get(value);
  if (!stored || stored.revoked_at !== undefined) return undefined;
  return {
    publishableKey: stored.publishable_key,
    organizationId: stored.organization_id,
    locationId: stored.location_id,
    allowedOrigins: stored.allowed_origins,
    mintsPerMinute: stored.mints_per_minute,
  };
}

/**
 * Per request (never cached): the path must name the key's own organization and
 * location (no partner reach), and the browser's Origin must be on the key's list.
 * A request without Origin did not come from a browser page: refused too.
 */
export function assertPublishableScope(scope: PublishableScope, target: { organizationId: string; locationId: string | undefined; origin: string | undefined }): void {
  if (target.organizationId !== scope.organizationId || target.locationId !== scope.locationId) {
    throw new AccessDenied('this publishable key may only mint one-time tokens for its own organization and location');
  }
  const origin = target.origin === undefined ? undefined : normalizeOrigin(target.origin);
  if (!origin || !scope.allowedOrigins.includes(origin)) {
    throw new AccessDenied(`origin ${JSON.stringify(target.origin ?? '')} is not allowed for this publishable key`);
  }
}

/** Counts the attempt (valid or not: card testing is many invalid attempts) and refuses past the key's budget. */
export async function chargeMintAttempt(scope: PublishableScope, limiter: MintRateLimiter, now: Date): Promise<void> {
  const { allowed, retryAfterSeconds } = await limiter.hit(scope.publishableKey, scope.mintsPerMinute, now);
  if (!allowed) throw new Throttled(`this publishable key may mint ${scope.mintsPerMinute} one-time tokens per minute; retry later`, retryAfterSeconds);
}

/** Whether any publishable key of the location allows `origin` (answers CORS preflights). */
export async function isOriginAllowedAtLocation(
  target: { organizationId: string; locationId: string; origin: string | undefined },
  store: Pick<PublishableKeyStore, 'listByLocation'>,
): Promise<string | undefined> {
  const origin = target.origin === undefined ? undefined : normalizeOrigin(target.origin);
  if (!origin) return undefined;
  const keys = await store.listByLocation(target.organizationId, target.locationId);
  return keys.some((key) => key.allowed_origins.includes(origin)) ? origin : undefined;
}

/** `list-publishable-keys org_<id> [loc_<id>]`: the organization's active keys, or one location's. */
export async function listPublishableKeys(
  input: { organizationId: string; locationId?: string },
  store: Pick<PublishableKeyStore, 'listByLocation' | 'listByOrganization'>,
): Promise<PublishableKeyListing[]> {
  const issues: FieldIssue[] = [];
  if (!isOrganizationId(input.organizationId)) issues.push({ field: 'organization_id', message: 'must be org_ followed by 1 to 60 letters, digits, _ or -' });
  if (input.locationId !== undefined && !isLocationId(input.locationId)) issues.push({ field: 'location_id', message: 'must be loc_ followed by 1 to 60 letters, digits, _ or -' });
  if (issues.length > 0) throw new InvalidRequest(issues);
  const keys = input.locationId === undefined ? await store.listByOrganization(input.organizationId) : await store.listByLocation(input.organizationId, input.locationId);
  return keys
    .filter((key) => key.revoked_at === undefined)
    .sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0))
    .map((key) => ({
      publishable_key: key.publishable_key,
      organization_id: key.organization_id,
      location_id: key.location_id,
      allowed_origins: key.allowed_origins,
      created_at: key.created_at,
    }));
}

/** Revokes at once in the store; the caller then flushes the API's authorizer cache. NotFound for an unknown key. */
export async function revokePublishableKey(publishableKey: string, store: Pick<PublishableKeyStore, 'revoke'>, now: Date = new Date()): Promise<{ publishable_key: string; revoked: true }> {
  if (!PUBLISHABLE_KEY_PATTERN.test(publishableKey) || !(await store.revoke(publishableKey, now))) throw new NotFound(`no publishable key ${publishableKey}`);
  return { publishable_key: publishableKey, revoked: true };
}
