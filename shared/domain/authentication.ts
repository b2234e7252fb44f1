import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { CredentialStore, SecretHasher, VerifiedCredential } from './credentials.ts';
import { authenticate, parseBasicAuthorization } from './credentials.ts';
import { NotAuthenticated } from './errors.ts';
import { isOrganizationId } from './ids.ts';
import type { PublishableKeyStore, PublishableScope } from './publishable-keys.ts';
import { authenticatePublishableKey, parseBearerPublishableKey } from './publishable-keys.ts';
import type { Caller } from './tenancy.ts';

/**
 * The authorizer's decision, with failed authentication throttled per source
 * address: after FAILED_AUTHENTICATION_LIMIT failures from one address within
 * the last FAILED_AUTHENTICATION_WINDOW_SECONDS, that address's requests
 * without valid credentials are refused, and refusing them costs no KMS call.
 */
export const FAILED_AUTHENTICATION_LIMIT = 30;
export const FAILED_AUTHENTICATION_WINDOW_SECONDS = 60;

/**
 * Failed authentications per source address, counted per second and kept
 * per clock window (minute): the last 60 seconds are the seconds of this
 * window and of the previous one that fall within them, exactly.
 */
export interface AuthFailureCounter {
  /** The window's failures, as [epoch second, failures in it]. */
  secondsOf(sourceIp: string, window: number): Promise<ReadonlyArray<readonly [number, number]>>;
  /** Counts one failure in its second. */
  add(sourceIp: string, window: number, second: number): Promise<void>;
}

export type AuthDecision =
  | { kind: 'secret'; caller: Caller }
  | { kind: 'publishable'; scope: PublishableScope }
  /** Too many failures from this address: 429 until `until` (epoch seconds). */
  | { kind: 'throttled'; until: number };

export interface AuthenticationDeps {
  credentials: Pick<CredentialStore, 'get' | 'recordUse'>;
  hasher: SecretHasher;
  publishableKeys: Pick<PublishableKeyStore, 'get'>;
  failures: AuthFailureCounter;
  verified: RecentlyVerified;
}

/**
 * Throws NotAuthenticated (401) for a refused attempt that is counted.
 * `publishableAllowed` says whether the route accepts publishable keys.
 */
export async function authenticateRequest(
  request: { authorization: string | undefined; organizationId: string | undefined; sourceIp: string; publishableAllowed: boolean },
  deps: AuthenticationDeps,
  now: Date = new Date(),
): Promise<AuthDecision> {
  const second = Math.floor(now.getTime() / 1000);
  const window = Math.floor(second / FAILED_AUTHENTICATION_WINDOW_SECONDS);
  const [previous, current] = await Promise.all([deps.failures.secondsOf(request.sourceIp, window - 1), deps.failures.secondsOf(request.sourceIp, window)]);
  const until = throttledUntil([...previous, ...current], second);
  const throttled = until !== undefined;
  try {
    if (parseBearerPublishableKey(request.authorization) !== undefined) {
      if (!request.publishableAllowed) throw new NotAuthenticated();
      // One GetItem and no KMS call, so it is checked as usual even when throttled.
      return { kind: 'publishable', scope: await authenticatePublishableKey(request, deps) };
    }
    if (throttled) {
      const caller = await authenticateWithoutKms(request, deps);
      return caller ? { kind: 'secret', caller } : { kind: 'throttled', until };
    }
    const caller = await authenticate(request, { ...deps, onVerified: (verified) => deps.verified.remember(verified) }, now);
    return { kind: 'secret', caller };
  } catch (error) {
    if (!(error instanceof NotAuthenticated)) throw error;
    if (throttled) return { kind: 'throttled', until };
    await deps.failures.add(request.sourceIp, window, second);
    throw error;
  }
}

/**
 * When the failures of the last 60 s (the seconds after `now - 60`, `now`
 * included) reach the limit: the epoch second at which, if no more come,
 * they fall below it again, as the oldest leave the 60 s; undefined when
 * they are below it now.
 */
export function throttledUntil(failures: ReadonlyArray<readonly [number, number]>, now: number): number | undefined {
  const recent = failures.filter(([second]) => second > now - FAILED_AUTHENTICATION_WINDOW_SECONDS && second <= now).sort(([a], [b]) => a - b);
  let remaining = recent.reduce((sum, [, count]) => sum + count, 0);
  if (remaining < FAILED_AUTHENTICATION_LIMIT) return undefined;
  for (const [second, count] of recent) {
    remaining -= count;
    if (remaining < FAILED_AUTHENTICATION_LIMIT) return second + FAILED_AUTHENTICATION_WINDOW_SECONDS;
  }
  return now + FAILED_AUTHENTICATION_WINDOW_SECONDS;
}

/**
 * For a throttled address: the stored credential (one GetItem) must be active
 * and the organization's, and this container must have verified this very key
 * against this very stored hash recently. Anything else is undefined, without
 * asking KMS.
 */
async function authenticateWithoutKms(
  request: { authorization: string | undefined; organizationId: string | undefined },
  deps: Pick<AuthenticationDeps, 'credentials' | 'verified'>,
): Promise<Caller | undefined> {
  const basic = parseBasicAuthorization(request.authorization);
  if (!basic || !isOrganizationId(request.organizationId)) return undefined;
  const stored = await deps.credentials.get(basic.accessId);
  if (!stored || stored.revoked_at !== undefined || stored.organization_id !== request.organizationId) return undefined;
  if (!deps.verified.matches({ accessId: basic.accessId, secureKey: basic.secureKey, secretMac: stored.secret_mac })) return undefined;
  return { organizationId: stored.organization_id, accessId: stored.api_access_id };
}

/**
 * Secure keys this container verified through KMS in the last few minutes, held
 * as an HMAC under a random per-container key (never stored, never logged), so
 * a valid caller behind a throttled address keeps working without a KMS call.
 * Bounded: the oldest entries go first.
 */
export class RecentlyVerified {
  private readonly key = randomBytes(32);
  private readonly entries = new Map<string, { digest: Buffer; secretMac: Buffer; expiresAt: number }>();

  constructor(
    private readonly ttlMs = 300_000,
    private readonly capacity = 10_000,
    private readonly clock: () => number = Date.now,
  ) {}

  remember(verified: VerifiedCredential): void {
    this.entries.delete(verified.accessId);
    if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(verified.accessId, { digest: this.digest(verified.secureKey), secretMac: Buffer.from(verified.secretMac), expiresAt: this.clock() + this.ttlMs });
  }

  matches(candidate: VerifiedCredential): boolean {
    const entry = this.entries.get(candidate.accessId);
    if (!entry || entry.expiresAt <= this.clock()) return false;
    const secretMac = Buffer.from(candidate.secretMac);
    // The stored hash must be the one verified against: a credential re-created under the same id does not inherit it.
    return secretMac.length === entry.secretMac.length && timingSafeEqual(secretMac, entry.secretMac) && timingSafeEqual(this.digest(candidate.secureKey), entry.digest);
  }

  private digest(secureKey: string): Buffer {
    return createHmac('sha256', this.key).update(secureKey).digest();
  }
}
