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
 * Failed authentications per source address and clock window. The last 60
 * seconds are estimated from two windows (a sliding window): this one's
 * count, and the previous one's share that still falls within 60 seconds.
 */
export interface AuthFailureCounter {
  count(sourceIp: string, window: number): Promise<number>;
  /** Counts one failure and returns the window's total. */
  add(sourceIp: string, window: number): Promise<number>;
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
  const position = now.getTime() / 1000 / FAILED_AUTHENTICATION_WINDOW_SECONDS;
  const window = Math.floor(position);
  const [current, previous] = await Promise.all([deps.failures.count(request.sourceIp, window), deps.failures.count(request.sourceIp, window - 1)]);
  const until = throttledUntil(current, previous, window, position - window);
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
    await deps.failures.add(request.sourceIp, window);
    throw error;
  }
}

/**
 * When the failures of the last 60 s, estimated as `current` plus the part of
 * `previous` still within them (rounded up: a failure is whole), fall below
 * the limit again if no more come (epoch seconds); undefined when they are
 * below it now. So 30 failures straddling two clock minutes throttle as 30 in
 * one do, and the throttle lasts about 60 s after the failures, not to the
 * end of a clock minute. Never more than 60 s from now: every failure counted
 * happened by now, so the 60 s window of the contract ends by then, whereas
 * the estimate, rounded up, can last two seconds longer.
 */
export function throttledUntil(current: number, previous: number, window: number, elapsed: number): number | undefined {
  const limit = FAILED_AUTHENTICATION_LIMIT;
  if (Math.ceil(current + previous * (1 - elapsed)) < limit) return undefined;
  // This window's failures alone reach the limit: they become the previous window's, which then fades.
  const [fadingWindow, fading, kept] = current >= limit ? [window + 1, current, 0] : [window, previous, current];
  // The estimate is below the limit once kept + fading * (1 - f) <= limit - 1.
  const endsAt = 1 - (limit - 1 - kept) / fading;
  const seconds = FAILED_AUTHENTICATION_WINDOW_SECONDS;
  return Math.min(Math.ceil((fadingWindow + endsAt) * seconds), Math.floor((window + elapsed) * seconds) + seconds);
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
