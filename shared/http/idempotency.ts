import { createHash } from 'node:crypto';
import { Conflict, InvalidRequest, Unprocessable } from '#shared/domain/errors.ts';
import type { IdempotencyClaim, IdempotencyStore } from '#shared/domain/idempotency.ts';
import { codePointLength } from '#shared/domain/paymethods/rules.ts';
import { logger } from '#shared/log/logger.ts';
import type { ApiRouteHandler } from './api-handler.ts';
import { classifyError, errorResponse } from './errors.ts';
import type { ApiRequest } from './request.ts';

export const IDEMPOTENCY_LEASE_MS = 30_000; // above API Gateway's 29 s: a live request never loses its key
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * Wraps any POST route with the contract's Idempotency-Key semantics:
 * same key + same request within 24 h replays the first answer (status,
 * headers, body) without running again; same key + another request is 422;
 * a repeat while the first still runs is 409. Keys are scoped to the
 * authenticated organization. "Same request" is the route, its path
 * parameters and the exact body bytes (so multipart uploads work too).
 *
 * Answers below 500 are kept (a 400 stays a 400 on retry); 5xx answers and
 * unexpected failures give the key back so a retry can succeed.
 */
export function idempotent(routeName: string, run: ApiRouteHandler, store: () => IdempotencyStore, clock: () => Date = () => new Date()): ApiRouteHandler {
  return async (request, options) => {
    const key = request.headers['idempotency-key'];
    if (key === undefined) return run(request, options);
    const length = codePointLength(key);
    if (length < 1 || length > 255) throw new InvalidRequest([{ field: 'Idempotency-Key', message: 'must be 1 to 255 characters' }], 'INVALID_IDEMPOTENCY_KEY');
    const claim: IdempotencyClaim = {
      scope: request.caller?.organizationId ?? 'anonymous',
      key,
      fingerprint: fingerprintOf(routeName, request),
      now: clock(),
      leaseMs: IDEMPOTENCY_LEASE_MS,
      retentionMs: IDEMPOTENCY_RETENTION_MS,
    };
    const outcome = await store().claim(claim);
    if (outcome.kind === 'replay') return { ...outcome.response, headers: { ...outcome.response.headers, 'Idempotent-Replayed': 'true' } };
    if (outcome.kind === 'in-progress') throw new Conflict('IDEMPOTENCY_KEY_IN_USE', 'a request with this Idempotency-Key is still being processed; retry later');
    if (outcome.kind === 'mismatch') throw new Unprocessable('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used with another request');

    let response;
    try {
      response = await run(request, options);
    } catch (error) {
      const known = classifyError(error);
      if (known && known.kind !== 'unavailable') await settle(store(), claim, errorResponse(known));
      else await store().release(claim).catch((releaseError: unknown) => logger.warn('idempotency key release failed', { error: releaseError }));
      throw error;
    }
    if (response.statusCode < 500) await settle(store(), claim, response);
    else await store().release(claim);
    return response;
  };
}

/**
 * The work is done: failing to record the answer must not turn a success
 * into an error. The key then stays in progress until its lease ends.
 */
async function settle(store: IdempotencyStore, claim: IdempotencyClaim, response: { statusCode: number; headers?: Record<string, string>; body?: unknown }): Promise<void> {
  try {
    await store.complete(claim, response);
  } catch (error) {
    logger.warn('idempotency answer could not be recorded', { error });
  }
}

function fingerprintOf(routeName: string, request: ApiRequest): string {
  const hash = createHash('sha256');
  hash.update(routeName).update('\n');
  hash.update(JSON.stringify(Object.entries(request.pathParameters).sort(([a], [b]) => a.localeCompare(b)))).update('\n');
  if (request.rawBody) hash.update(request.rawBody);
  return hash.digest('base64url');
}
