import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The per-request deadline. The API middleware opens one for every request;
 * every AWS client (see client-config.ts) and the PayPal adapter refuse to
 * start a call past it and cut a call that would outlive it. So a request
 * made of several sequential calls still answers within its budget, whatever
 * a dependency does, and no retry starts after the answer has been given.
 */
const current = new AsyncLocalStorage<{ deadline: number }>();

/**
 * A request's worst case is an uncached authorizer call plus the route's
 * handler: 2 s + 7.5 s, and the answer (503 at worst) leaves within 10 s,
 * well inside API Gateway's 29 s. Normal requests use a few dozen milliseconds;
 * the authorizer's one GetItem and one GenerateMac get a hundredfold headroom.
 */
export const AUTHORIZER_BUDGET_MS = 2_000;
export const REQUEST_BUDGET_MS = 7_500;
/** Lambda's timeout for API functions: above the budget, so the deadline answers first; below API Gateway's 29 s. */
export const API_FUNCTION_TIMEOUT_SECONDS = 12;

export function withDeadline<T>(budgetMs: number, run: () => Promise<T>): Promise<T> {
  return current.run({ deadline: Date.now() + budgetMs }, run);
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
