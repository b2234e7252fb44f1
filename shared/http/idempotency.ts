import { randomUUID } from 'node:crypto';
import { REQUEST_BUDGET_MS } from '#shared/platform/function-sizing.ts';
import { Conflict, InvalidRequest, OutcomeUnknown, Unprocessable } from '#shared/domain/errors.ts';
import type { DomainError } from '#shared/domain/errors.ts';
import type { IdempotencyClaim, IdempotencyCompletion, IdempotencyDeps, IdempotencyStore, StoredResponse } from '#shared/domain/idempotency.ts';
import { codePointLength } from '#shared/domain/paymethods/rules.ts';
import { logger } from '#shared/log/logger.ts';
import { idempotency } from '#shared/wiring/idempotency.ts';
import type { ApiRouteHandler } from './api-handler.ts';
import { apiHandler } from './api-handler.ts';
import { classifyError, errorResponse } from './errors.ts';
import { multipartBoundary } from './multipart-boundary.ts';
import type { ApiRequest } from './request.ts';
import type { ApiResponse } from './response.ts';

/**
 * A run answers by its request deadline, so after this lease it is over; a
 * retry may then take the key. Taking it over early would still be safe (the
 * old run's commit is fenced on its owner id), only no longer a 409.
 */
export const IDEMPOTENCY_LEASE_MS = REQUEST_BUDGET_MS + 1_500;
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * Hands a create route the completion its repository writes in the record's
 * own transaction; undefined when the request carries no Idempotency-Key.
 */
export type CompletionFor = <T>(answer: (record: T) => ApiResponse) => IdempotencyCompletion<T> | undefined;
export type IdempotentRouteHandler = (request: ApiRequest, options: { signal: AbortSignal; completion: CompletionFor }) => Promise<ApiResponse>;

/** Never part of what makes two requests the same: PCI DSS 3.3.1.2 keeps it out of everything stored, hashes included. */
const CARD_VERIFICATION_VALUE = 'card_verification_value';

/**
 * Wraps a create route with the contract's Idempotency-Key semantics: same
 * key + same request within 24 h replays the first answer (status, headers,
 * body) without running again; same key + another request is 422; a repeat
 * while the first still runs is 409. Keys are scoped to the authenticated
 * organization. "Same request" is the route, its path parameters and the
 * body: a JSON body in canonical form (members sorted, whitespace aside; a
 * null member still counts) without any `card_verification_value`, so a retry that
 * sends another CVV (or none) is the same request; a multipart body's parts,
 * its boundary aside (so an upload retried by a client that picks a new
 * boundary each time is the same request). What is stored of it is a keyed
 * hash (RequestHasher), never the body or a plain hash of it.
 *
 * Exactly once: a success is recorded by the record's own transaction (the
 * route passes `completion` to its use case), never by a later write that
 * could be lost. Refusals below 500 are recorded afterwards (a 400 stays a
 * 400 on retry; losing that record only lets the refusal run again), except
 * those that invite a retry (429, 409 CONCURRENT_MODIFICATION). A
 * failure before anything was written gives the key back; a failure whose
 * outcome is unknown keeps it (503 OUTCOME_UNKNOWN), so the retry replays
 * the committed record or, if nothing committed, performs the write once.
 */
export function idempotent(routeName: string, run: IdempotentRouteHandler, deps: () => IdempotencyDeps, clock: () => Date = () => new Date()): ApiRouteHandler {
  const store = () => deps().store;
  return async (request, options) => {
    const key = request.headers['idempotency-key'];
    if (key === undefined) return run(request, { ...options, completion: () => undefined });
    const length = codePointLength(key);
    if (length < 1 || length > 255) throw new InvalidRequest([{ field: 'Idempotency-Key', message: 'must be 1 to 255 characters' }], 'INVALID_IDEMPOTENCY_KEY');
    const claim: IdempotencyClaim = {
      scope: request.caller?.organizationId ?? 'anonymous',
      key,
      fingerprint: await deps().hasher.hash(requestParts(routeName, request)),
      owner: randomUUID(),
      now: clock(),
      leaseMs: IDEMPOTENCY_LEASE_MS,
      retentionMs: IDEMPOTENCY_RETENTION_MS,
    };
    let outcome: Awaited<ReturnType<IdempotencyStore['claim']>>;
    try {
      outcome = await store().claim(claim);
    } catch (error) {
      // The claim may have landed with its answer lost: the retry this failure invites must not find the key held.
      await quietly('release', store().release(claim));
      throw error;
    }
    if (outcome.kind === 'replay') return { ...outcome.response, headers: { ...outcome.response.headers, 'Idempotent-Replayed': 'true' } };
    if (outcome.kind === 'in-progress') throw new Conflict('IDEMPOTENCY_KEY_IN_USE', 'a request with this Idempotency-Key is still being processed; retry later');
    if (outcome.kind === 'mismatch') throw new Unprocessable('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used with another request');

    let committed: StoredResponse | undefined;
    const completion: CompletionFor = (answer) => ({ claim, answer, committed: (response) => (committed = response) });
    let response: ApiResponse;
    try {
      response = await run(request, { ...options, completion });
    } catch (error) {
      // The record and its answer are stored: that is the answer, whatever failed afterwards.
      if (committed) return committed as ApiResponse;
      const known = classifyError(error);
      if (known instanceof OutcomeUnknown) await quietly('abandon', store().abandon(claim));
      else if (known && !invitesRetry(known)) await quietly('complete', store().complete(claim, errorResponse(known)));
      else await quietly('release', store().release(claim));
      throw error;
    }
    if (committed || response.statusCode >= 500) {
      if (!committed) await quietly('release', store().release(claim));
      return response;
    }
    if (response.statusCode < 300) {
      // A route whose use case did not store its answer in the record's transaction: a bug, and a duplicate risk.
      logger.error('idempotent success without a transactional completion', { route: routeName });
    }
    await quietly('complete', store().complete(claim, response));
    return response;
  };
}

/**
 * A create route (its table entry writes `idempotency` items): the API
 * handler of every route, around the Idempotency-Key semantics of
 * `idempotent`, keeping its keys in the service's idempotency store.
 */
export function idempotentApiHandler(routeName: string, run: IdempotentRouteHandler) {
  return apiHandler(routeName, idempotent(routeName, run, idempotency));
}

/**
 * A refusal that asks the caller to try again (a dependency down, a rate
 * limit, a record changed by another request meanwhile) is not the answer to
 * the request: stored, it would answer every retry with the same key for 24 h.
 */
function invitesRetry(error: DomainError): boolean {
  return error.kind === 'unavailable' || error.kind === 'throttled' || error.code === 'CONCURRENT_MODIFICATION';
}

/**
 * Bookkeeping after the outcome is known must not change the answer. A lost
 * write here is harmless: the key stays in progress and its lease ends.
 */
async function quietly(what: string, write: Promise<void>): Promise<void> {
  try {
    await write;
  } catch (error) {
    logger.warn(`idempotency key ${what} failed`, { error });
  }
}

/** What the keyed hash covers: route, path parameters, then the body's form (as `idempotent` says). */
export function requestParts(routeName: string, request: Pick<ApiRequest, 'pathParameters' | 'body' | 'rawBody' | 'headers'>): Array<string | Uint8Array> {
  const parts: Array<string | Uint8Array> = [routeName, JSON.stringify(Object.entries(request.pathParameters).sort(([a], [b]) => a.localeCompare(b)))];
  if (request.body !== undefined) return [...parts, canonicalJson(request.body)];
  if (!request.rawBody) return parts;
  return [...parts, ...(multipartParts(request.rawBody, request.headers['content-type']) ?? [request.rawBody])];
}

/**
 * JSON text with every object's members in one order and every
 * `card_verification_value` and `null` member, at any depth, left out: equal
 * for bodies that mean the same (the contract reads a `null` member as
 * absent), whatever their spacing or member order.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value as Record<string, unknown>)
      .filter(([name, member]) => name !== CARD_VERIFICATION_VALUE && member !== null)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${members.map(([name, member]) => `${JSON.stringify(name)}:${canonicalJson(member)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * A multipart body split at its boundary's delimiters (RFC 2046 keeps the
 * boundary out of the parts), which fetch, browsers and `curl -F` choose
 * afresh every time they send a form; undefined for any other body.
 */
function multipartParts(body: Buffer, contentType: string | undefined): Buffer[] | undefined {
  let boundary: string;
  try {
    boundary = multipartBoundary(contentType);
  } catch {
    return undefined;
  }
  const delimiter = Buffer.from(`--${boundary}`, 'latin1');
  const parts: Buffer[] = [];
  let start = 0;
  for (let at = body.indexOf(delimiter); at !== -1; at = body.indexOf(delimiter, start)) {
    parts.push(body.subarray(start, at));
    start = at + delimiter.length;
  }
  parts.push(body.subarray(start));
  return parts;
}
