import { AsyncLocalStorage } from 'node:async_hooks';
import { ANSWER_MARGIN_MS, REQUEST_BUDGET_MS } from '#shared/platform/function-sizing.ts';

/**
 * The per-request deadline. The API middleware and the authorizer open one for every invocation;
 * every AWS client (see client-config.ts) and the PayPal adapter refuse to
 * start a call past it and cut a call that would outlive it. So a request
 * made of several sequential calls still answers within its budget, whatever
 * a dependency does, and no retry starts after the answer has been given.
 */
const current = new AsyncLocalStorage<{ deadline: number }>();

/** What a request's deadline is computed from: the event's arrival time and the invocation's own clock. */
export interface RequestClock {
  /** `requestContext.requestTimeEpoch`; undefined when the event has none (a direct invocation). */
  readonly arrivedAt: number | undefined;
  /** `context.getRemainingTimeInMillis()`; undefined outside Lambda. */
  readonly invocationRemainingMs: number | undefined;
}

/**
 * The instant dependencies stop for this invocation: `REQUEST_BUDGET_MS` after
 * the request arrived, or `capMs` after now if that is sooner (the authorizer's
 * share), and always `ANSWER_MARGIN_MS` before the function's own timeout. An
 * arrival time in the future (clock skew) or missing counts as now.
 */
export function requestDeadline(clock: RequestClock, now: number, capMs = REQUEST_BUDGET_MS): number {
  const arrivedAt = clock.arrivedAt !== undefined && Number.isFinite(clock.arrivedAt) && clock.arrivedAt <= now ? clock.arrivedAt : now;
  const candidates = [arrivedAt + REQUEST_BUDGET_MS, now + capMs];
  if (clock.invocationRemainingMs !== undefined) candidates.push(now + clock.invocationRemainingMs - ANSWER_MARGIN_MS);
  return Math.min(...candidates);
}

/** Runs one invocation under its request's deadline (see requestDeadline). */
export function withRequestDeadline<T>(clock: RequestClock, run: () => Promise<T>, capMs?: number): Promise<T> {
  return current.run({ deadline: requestDeadline(clock, Date.now(), capMs) }, run);
}

/** The clock of an API Gateway event (proxy or REQUEST authorizer) and its Lambda context. */
export function requestClockOf(event: { requestContext?: { requestTimeEpoch?: number } | null }, context: { getRemainingTimeInMillis?: () => number } | undefined): RequestClock {
  return { arrivedAt: event.requestContext?.requestTimeEpoch, invocationRemainingMs: context?.getRemainingTimeInMillis?.() };
}

/** Milliseconds left before the current request's deadline; undefined outside a request (CLIs, S3 triggers). */
export function remainingMs(): number | undefined {
  const scope = current.getStore();
  return scope === undefined ? undefined : scope.deadline - Date.now();
}

/**
 * A dependency call stopped by the request deadline. `requestSent` tells whether
 * the call had been handed to the network (its effect is then unknown) or was
 * refused before it started (nothing happened).
 */
export class DeadlineExceeded extends Error {
  override readonly name = 'RequestDeadlineExceeded';
  constructor(
    readonly requestSent: boolean,
    readonly dependency: string,
  ) {
    super(`${dependency}: the request deadline passed ${requestSent ? 'while waiting for an answer' : 'before the call started'}`);
  }
}
