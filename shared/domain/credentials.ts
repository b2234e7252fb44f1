import { timingSafeEqual } from 'node:crypto';
import { InvalidRequest, NotAuthenticated, NotFound } from './errors.ts';
import { isOrganizationId, randomBase62 } from './ids.ts';
import type { Caller, OrganizationStore } from './tenancy.ts';

export interface StoredCredential {
  api_access_id: string;
  organization_id: string;
  /** Keyed hash (HMAC) of the secure key; the key itself is never stored. */
  secret_mac: Uint8Array;
  /**
   * The scheme `secret_mac` was computed under (SecretHasher.version). Absent
   * on credentials from before versions were stored: those no longer
   * authenticate and are re-issued (docs/operations.md, "Credentials").
   */
  secret_mac_version?: number;
  created_at: string;
  /** Stamped by the authorizer when over LAST_USED_RESOLUTION_MS old (so it may lag by that plus the authorizer cache's TTL). */
  last_used_at?: string;
  /** Set by `admin revoke-credentials`; a revoked credential never authenticates again and is not listed. */
  revoked_at?: string;
}

export interface CredentialStore {
  get(accessId: string): Promise<StoredCredential | undefined>;
  /** Fails with Conflict when the access id is taken (by any credential but an unrevoked one without `secret_mac_version`, which it replaces). */
  create(credential: StoredCredential): Promise<void>;
  /** The organization's active (unrevoked) credentials, newest first: a Query, never a Scan. */
  listByOrganization(organizationId: string): Promise<StoredCredential[]>;
  /** False when no such credential exists; revoking twice is harmless. */
  revoke(accessId: string, now: Date): Promise<boolean>;
  /** Sets last_used_at to `now` unless it is already on or after `staleBefore` (or the credential is revoked). */
  recordUse(accessId: string, now: Date, staleBefore: Date): Promise<void>;
}

/** How a credential is shown by `admin list-credentials`: never its hash. */
export interface CredentialListing {
  api_access_id: string;
  organization_id: string;
  created_at: string;
  last_used_at: string | null;
}

/** last_used_at is written at most this often per credential; with AUTHORIZER_CACHE_TTL_SECONDS (shared/platform/names.ts), how far it may lag. */
export const LAST_USED_RESOLUTION_MS = 30_000;

/**
 * Computes the keyed hash of a secure key. The hashing key comes from the key
 * service and is never stored (in AWS: derived once per process from a KMS
 * HMAC key), and the hash is computed in memory, so verifying an attempt never
 * costs a call to the key service: refusing a guess is as cheap as accepting
 * a valid key.
 */
export interface SecretHasher {
  /** The scheme `mac` computes, stored beside each hash: a credential hashed under another never verifies. */
  readonly version: number;
  mac(secret: string): Promise<Uint8Array>;
}

export interface IssuedCredential {
  organization_id: string;
  api_access_id: string;
  api_secure_key: string;
}

const MAX_ACCESS_ID_LENGTH = 128;
const MAX_SECURE_KEY_LENGTH = 256;
const ACCESS_ID_PATTERN = /^[\x21-\x39\x3b-\x7e]{1,128}$/; // printable ASCII without ':' or space

export interface BasicCredentials {
  accessId: string;
  secureKey: string;
}

/**
 * Parses `Basic base64(id:key)` strictly: canonical base64, UTF-8 text, a
 * non-empty id without ':' and a non-empty key. Anything else is undefined.
 */
export function parseBasicAuthorization(header: string | undefined): BasicCredentials | undefined {
  if (!header || header.length > 1024) return undefined;
  const match = /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(header.trim());
  if (!match?.[1]) return undefined;
  const bytes = Buffer.from(match[1], 'base64');
  // Canonical base64 only (padding may be omitted, as some clients do): no stray bits, no extra padding.
  const canonical = bytes.toString('base64');
  if (match[1] !== canonical && match[1] !== canonical.replace(/=+$/, '')) return undefined;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
  const separator = text.indexOf(':');
  if (separator <= 0) return undefined;
  const accessId = text.slice(0, separator);
  const secureKey = text.slice(separator + 1);
  if (!ACCESS_ID_PATTERN.test(accessId) || secureKey.length === 0 || secureKey.length > MAX_SECURE_KEY_LENGTH) return undefined;
  return { accessId, secureKey };
}

/** Compared against when the access id is unknown, so both paths do the same work. */
const UNKNOWN_CREDENTIAL_MAC = new Uint8Array(32);

/**
 * The caller these credentials prove, or undefined: an unknown, revoked or
 * outdated credential and a wrong key alike, after the same work. Which
 * organization the request names is checked per request, not here
 * (requireOrganizationNamed).
 */
export async function verifySecureKey(
  basic: BasicCredentials,
  deps: { credentials: Pick<CredentialStore, 'get' | 'recordUse'>; hasher: SecretHasher },
  now: Date = new Date(),
): Promise<Caller | undefined> {
  const [found, presentedMac] = await Promise.all([deps.credentials.get(basic.accessId), deps.hasher.mac(basic.secureKey)]);
  const stored = found?.revoked_at === undefined && found?.secret_mac_version === deps.hasher.version ? found : undefined;
  const expected = stored?.secret_mac ?? UNKNOWN_CREDENTIAL_MAC;
  const macMatches = expected.length === presentedMac.length && timingSafeEqual(expected, presentedMac);
  if (!stored || !macMatches) return undefined;
  await recordUse(stored, deps.credentials, now);
  return { organizationId: stored.organization_id, accessId: stored.api_access_id };
}

/**
 * The organization a request names must be the caller's. `named` holds the
 * values of the headers that may name it (undefined when absent): at least one
 * given, every given one the same, and that one the caller's; anything else is
 * 401, as a wrong credential is.
 */
export function requireOrganizationNamed(caller: Caller, named: ReadonlyArray<string | undefined>): void {
  const given = named.filter((value): value is string => value !== undefined);
  if (given.length === 0 || given.some((value) => value !== caller.organizationId) || !isOrganizationId(caller.organizationId)) throw new NotAuthenticated();
}

/**
 * The stored credential is in hand already, so a fresh stamp costs no write;
 * a stale one costs one conditional write (at most one per
 * LAST_USED_RESOLUTION_MS, whatever the number of containers). Bookkeeping never refuses a valid caller: a failed
 * stamp is retried by the next authentication.
 */
async function recordUse(stored: StoredCredential, credentials: Pick<CredentialStore, 'recordUse'>, now: Date): Promise<void> {
  const staleBefore = new Date(now.getTime() - LAST_USED_RESOLUTION_MS);
  if (stored.last_used_at !== undefined && stored.last_used_at >= staleBefore.toISOString()) return;
  await credentials.recordUse(stored.api_access_id, now, staleBefore).catch(() => undefined);
}

export async function listCredentials(organizationId: string, credentials: Pick<CredentialStore, 'listByOrganization'>): Promise<CredentialListing[]> {
  if (!isOrganizationId(organizationId)) throw new InvalidRequest([{ field: 'organization_id', message: 'must be org_ followed by 1 to 60 letters, digits, _ or -' }]);
  return (await credentials.listByOrganization(organizationId)).map((credential) => ({
    api_access_id: credential.api_access_id,
    organization_id: credential.organization_id,
    created_at: credential.created_at,
    last_used_at: credential.last_used_at ?? null,
  }));
}

/** Revokes at once in the store; the caller then flushes the API's authorizer cache. NotFound for an unknown id. */
export async function revokeCredential(accessId: string, credentials: Pick<CredentialStore, 'revoke'>, now: Date = new Date()): Promise<{ api_access_id: string; revoked: true }> {
  if (!ACCESS_ID_PATTERN.test(accessId) || !(await credentials.revoke(accessId, now))) throw new NotFound(`no credential with api_access_id ${accessId}`);
  return { api_access_id: accessId, revoked: true };
}

/**
 * Issues a credential for an existing organization. The secure key is random
 * (256 bits) unless given (seeding fixed demo credentials) and is returned only here.
 */
export async function issueCredential(
  input: { organizationId: string; accessId?: string; secureKey?: string },
  deps: { organizations: OrganizationStore; credentials: Pick<CredentialStore, 'create'>; hasher: SecretHasher },
  now: Date = new Date(),
): Promise<IssuedCredential> {
  const accessId = input.accessId ?? `ak_${randomBase62(22)}`;
  const secureKey = input.secureKey ?? `sk_${randomBase62(43)}`;
  const issues = [];
  if (!isOrganizationId(input.organizationId)) issues.push({ field: 'organization_id', message: 'must be org_ followed by 1 to 60 letters, digits, _ or -' });
  if (!ACCESS_ID_PATTERN.test(accessId)) issues.push({ field: 'api_access_id', message: `must be 1 to ${MAX_ACCESS_ID_LENGTH} printable ASCII characters without ':'` });
  if (secureKey.length === 0 || secureKey.length > MAX_SECURE_KEY_LENGTH) issues.push({ field: 'api_secure_key', message: `must be 1 to ${MAX_SECURE_KEY_LENGTH} characters` });
  if (issues.length > 0) throw new InvalidRequest(issues);
  if (!(await deps.organizations.get(input.organizationId))) throw new NotFound(`organization ${input.organizationId} does not exist`);
  await deps.credentials.create({
    api_access_id: accessId,
    organization_id: input.organizationId,
    secret_mac: await deps.hasher.mac(secureKey),
    secret_mac_version: deps.hasher.version,
    created_at: now.toISOString(),
  });
  return { organization_id: input.organizationId, api_access_id: accessId, api_secure_key: secureKey };
}
