import type { CredentialStore, SecretHasher } from './credentials.ts';
import { parseBasicAuthorization, verifySecureKey } from './credentials.ts';
import { NotAuthenticated } from './errors.ts';
import type { PublishableKeyStore, PublishableScope } from './publishable-keys.ts';
import { authenticatePublishableKey, parseBearerPublishableKey } from './publishable-keys.ts';
import type { Caller } from './tenancy.ts';

/**
 * The authorizer's decision, with failed authentication capped per source
 * address and per access id: once either has FAILED_AUTHENTICATION_LIMIT
 * failures within the last FAILED_AUTHENTICATION_WINDOW_SECONDS, attempts it
 * covers that do not carry valid credentials are refused as throttled.
 *
 * Valid credentials are never throttled: verifying a secure key costs no call
 * to the key service (an HMAC in memory, see SecretHasher), so every attempt is
 * verified first, and only a failure looks at the counters. A failure against
 * a blocked subject is not counted and costs nothing more; any other failure is
 * counted atomically, and the counter's answer includes it, so the failure
 * that takes a count past the limit is itself throttled however many run in
 * parallel.
 */
export const FAILED_AUTHENTICATION_LIMIT = 30;
export const FAILED_AUTHENTICATION_WINDOW_SECONDS = 60;

/** What a failure is counted against: the address it came from, and the access id it named, if any. */
export interface FailureSubject {
  readonly kind: 'address' | 'access-id';
  readonly id: string;
}

/** Failures per second, as [epoch second, failures in it]. */
export type FailureTally = ReadonlyArray<readonly [number, number]>;

/**
 * Failed authentications per subject, counted per second and kept per clock
 * minute: the last 60 seconds are the seconds of this minute and of the
 * previous one that fall within them, exactly.
 */
export interface AuthFailureCounter {
  /** Each subject's tally in `minute` and in the minute before, in the subjects' order (consistent reads). */
  read(subjects: readonly FailureSubject[], minute: number): Promise<Array<{ previous: FailureTally; current: FailureTally }>>;
  /**
   * Counts one failure at `second` for each subject, atomically, and answers
   * each subject's tally of `minute` as it stands with this failure in it.
   */
  add(subjects: readonly FailureSubject[], minute: number, second: number): Promise<FailureTally[]>;
}

export type AuthDecision =
  | { kind: 'secret'; caller: Caller }
  | { kind: 'publishable'; scope: PublishableScope }
  /** Too many failures from this address or naming this access id: 429 until `until` (epoch seconds). */
  | { kind: 'throttled'; until: number };

export interface AuthenticationDeps {
  credentials: Pick<CredentialStore, 'get' | 'recordUse'>;
  hasher: SecretHasher;
  publishableKeys: Pick<PublishableKeyStore, 'get'>;
  failures: AuthFailureCounter;
}

/**
 * Decides on the credentials alone: which organization a request names is
 * checked on every request against the caller's (the organization header is
 * no part of the authorizer's cache key). Throws NotAuthenticated (401) for a
 * failure that is counted and within the caps. `publishableAllowed` says
 * whether the route accepts publishable keys.
 */
export async function authenticateRequest(
  request: { authorization: string | undefined; sourceIp: string; publishableAllowed: boolean },
  deps: AuthenticationDeps,
  now: Date = new Date(),
): Promise<AuthDecision> {
  const address: FailureSubject = { kind: 'address', id: request.sourceIp };
  if (parseBearerPublishableKey(request.authorization) !== undefined) {
    const scope = request.publishableAllowed ? await authenticatePublishableKey(request, deps) : undefined;
    return scope ? { kind: 'publishable', scope } : refuse([address], deps, now);
  }
  const basic = parseBasicAuthorization(request.authorization);
  const caller = basic && (await verifySecureKey(basic, deps, now));
  if (caller) return { kind: 'secret', caller };
  return refuse(basic ? [address, { kind: 'access-id', id: basic.accessId }] : [address], deps, now);
}

/**
 * A failed attempt: throttled, without counting it, when a subject is already
 * over the limit; otherwise counted, and throttled when the count with it goes
 * past the limit (so parallel failures overshoot by none), else 401.
 */
async function refuse(subjects: readonly FailureSubject[], deps: Pick<AuthenticationDeps, 'failures'>, now: Date): Promise<AuthDecision> {
  const second = Math.floor(now.getTime() / 1000);
  const minute = Math.floor(second / FAILED_AUTHENTICATION_WINDOW_SECONDS);
  const tallies = await deps.failures.read(subjects, minute);
  const blockedUntil = latest(tallies.map(({ previous, current }) => throttledUntil([...previous, ...current], second)));
  if (blockedUntil !== undefined) return { kind: 'throttled', until: blockedUntil };
  const counted = await deps.failures.add(subjects, minute, second);
  const withThis = tallies.map(({ previous }, index) => [...previous, ...(counted[index] ?? [])]);
  if (withThis.some((tally) => failuresWithin(tally, second) > FAILED_AUTHENTICATION_LIMIT)) {
    return { kind: 'throttled', until: latest(withThis.map((tally) => throttledUntil(tally, second))) ?? second + FAILED_AUTHENTICATION_WINDOW_SECONDS };
  }
  throw new NotAuthenticated();
}

/** The failures of the last 60 s: the seconds after `now - 60`, `now` included. */
function recentSeconds(failures: FailureTally, now: number): FailureTally {
  return failures.filter(([second]) => second > now - FAILED_AUTHENTICATION_WINDOW_SECONDS && second <= now);
}

function failuresWithin(failures: FailureTally, now: number): number {
  return recentSeconds(failures, now).reduce((sum, [, count]) => sum + count, 0);
}

/**
 * When the failures of the last 60 s reach the limit: the epoch second at
 * which, if no more come, they fall below it again, as the oldest leave the
 * 60 s; undefined when they are below it now.
 */
export function throttledUntil(failures: FailureTally, now: number): number | undefined {
  const recent = [...recentSeconds(failures, now)].sort(([a], [b]) => a - b);
  let remaining = recent.reduce((sum, [, count]) => sum + count, 0);
  if (remaining < FAILED_AUTHENTICATION_LIMIT) return undefined;
  for (const [second, count] of recent) {
    remaining -= count;
    if (remaining < FAILED_AUTHENTICATION_LIMIT) return second + FAILED_AUTHENTICATION_WINDOW_SECONDS;
  }
  return now + FAILED_AUTHENTICATION_WINDOW_SECONDS;
}

function latest(instants: ReadonlyArray<number | undefined>): number | undefined {
  const defined = instants.filter((instant): instant is number => instant !== undefined);
  return defined.length > 0 ? Math.max(...defined) : undefined;
}
