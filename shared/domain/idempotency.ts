/**
 * Idempotency records (IETF Idempotency-Key draft semantics): the port the
 * HTTP wrapper (shared/http/idempotency.ts) uses and the DynamoDB adapter
 * (shared/store/idempotency.ts) implements.
 *
 * Exactly once: a create records its answer in the same atomic write as the
 * record it answers for (an IdempotencyCompletion handed to the repository),
 * so the key knows every committed record. Each run holds the key under its
 * own `owner` id; that write is conditional on still owning it, so a run that
 * lost the key (its lease ran out and a retry took over) can never commit.
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
  /**
   * Keyed hash (RequestHasher) of what makes two requests "the same": route,
   * path parameters and the body's canonical form without the CVV. Stored.
   */
  fingerprint: string;
  /** This run's id: the key's writes are fenced on it. */
  owner: string;
  now: Date;
  /** How long a running request holds the key before another may take over (a crash must not block forever). */
  leaseMs: number;
  /** How long the answer is kept. */
  retentionMs: number;
}

/**
 * The answer to an idempotent create, to be stored by the repository in the
 * transaction that writes `T`. The repository calls `answer` with the record
 * exactly as it commits it, and `committed` once the transaction succeeded.
 */
export interface IdempotencyCompletion<T> {
  readonly claim: IdempotencyClaim;
  answer(record: T): StoredResponse;
  committed(response: StoredResponse): void;
}

/** The same completion for a use case whose answer is built from more than the stored record. */
export function completionOf<T, R>(completion: IdempotencyCompletion<R> | undefined, toAnswered: (record: T) => R): IdempotencyCompletion<T> | undefined {
  if (!completion) return undefined;
  return { claim: completion.claim, answer: (record) => completion.answer(toAnswered(record)), committed: (response) => completion.committed(response) };
}

/**
 * Hashes what makes a request itself under a secret key (PCI DSS v4.0.1
 * 3.5.1.1: a keyed hash of anything that may hold a card number), so the
 * stored value cannot be tested offline against guessed bodies. The key never
 * leaves the adapter (shared/aws/kms-request-hasher.ts).
 */
export interface RequestHasher {
  /** Equal for equal lists of parts; each part counts on its own (no two lists hash alike by concatenation). */
  hash(parts: ReadonlyArray<string | Uint8Array>): Promise<string>;
}

export interface IdempotencyStore {
  claim(claim: IdempotencyClaim): Promise<ClaimOutcome>;
  /** Stores an answer that came with no record (a refusal); only while `claim.owner` holds the key. */
  complete(claim: IdempotencyClaim, response: StoredResponse): Promise<void>;
  /** Gives the key back: the request failed before anything could be written. */
  release(claim: IdempotencyClaim): Promise<void>;
  /** Ends the lease now but keeps the key: the run gave up with its outcome unknown, a retry may take over at once. */
  abandon(claim: IdempotencyClaim): Promise<void>;
}

/** Where keys are kept, and the keyed hash that tells one request from another. */
export interface IdempotencyDeps {
  store: IdempotencyStore;
  hasher: RequestHasher;
}
