import { timingSafeEqual } from 'node:crypto';
import { InvalidRequest, NotAuthenticated, NotFound } from './errors.ts';
import { isOrganizationId, randomBase62 } from './ids.ts';
import type { Caller, OrganizationStore } from './tenancy.ts';

export interface StoredCredential {
  api_access_id: string;
  organization_id: string;
  /** Keyed hash (HMAC) of the secure key; the key itself is never stored. */
  secret_mac: Uint8Array;
  created_at: string;
}

export interface CredentialStore {
  get(accessId: string): Promise<StoredCredential | undefined>;
  /** Fails with Conflict when the access id is taken. */
  create(credential: StoredCredential): Promise<void>;
}

/** Computes the keyed hash of a secure key; in AWS the HMAC key never leaves KMS. */
export interface SecretHasher {
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

export async function authenticate(
  request: { authorization: string | undefined; organizationId: string | undefined },
  deps: { credentials: CredentialStore; hasher: SecretHasher },
): Promise<Caller> {
  const basic = parseBasicAuthorization(request.authorization);
  if (!basic || !isOrganizationId(request.organizationId)) throw new NotAuthenticated();
  const [stored, presentedMac] = await Promise.all([deps.credentials.get(basic.accessId), deps.hasher.mac(basic.secureKey)]);
  const expected = stored?.secret_mac ?? UNKNOWN_CREDENTIAL_MAC;
  const macMatches = expected.length === presentedMac.length && timingSafeEqual(expected, presentedMac);
  if (!stored || !macMatches || stored.organization_id !== request.organizationId) throw new NotAuthenticated();
  return { organizationId: stored.organization_id, accessId: stored.api_access_id };
}

/**
 * Issues a credential for an existing organization. The secure key is random
 * (256 bits) unless given (seeding fixed demo credentials) and is returned only here.
 */
export async function issueCredential(
  input: { organizationId: string; accessId?: string; secureKey?: string },
  deps: { organizations: OrganizationStore; credentials: CredentialStore; hasher: SecretHasher },
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
    created_at: now.toISOString(),
  });
  return { organization_id: input.organizationId, api_access_id: accessId, api_secure_key: secureKey };
}
