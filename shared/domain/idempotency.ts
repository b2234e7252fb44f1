/**
 * Idempotency records (IETF Idempotency-Key draft semantics): the port the
 * HTTP wrapper (shared/http/idempotency.ts) uses and the DynamoDB adapter
 * (shared/store/idempotency.ts) implements.
 */

/** A response as it will be replayed: status, headers and JSON body. */
export interface StoredResponse {
  statusCode: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export type ClaimOutcome =
  /** This request owns the key now and must run, then complete or release it. */
  | { kind: 'claimed' }
  /** Same key, same request, already answered: give the stored answer again. */
  | { kind: 'replay'; response: StoredResponse }
  /** Same key, same request, the first one is still running (its lease has not expired). */
  | { kind: 'in-progress' }
  /** Same key, another request. */
  | { kind: 'mismatch' };

export interface IdempotencyClaim {
  /** Whose key it is: the authenticated organization, so tenants never share keys. */
  scope: string;
  key: string;
  /** Hash of what makes two requests "the same" (route, path parameters, body bytes). */
  fingerprint: string;
  now: Date;
  /** How long a running request holds the key before another may take over (a crash must not block forever). */
  leaseMs: number;
  /** How long the answer is kept. */
  retentionMs: number;
}

export interface IdempotencyStore {
  claim(claim: IdempotencyClaim): Promise<ClaimOutcome>;
  complete(claim: IdempotencyClaim, response: StoredResponse): Promise<void>;
  /** Gives the key back (the request failed in a way worth retrying). */
  release(claim: IdempotencyClaim): Promise<void>;
}
