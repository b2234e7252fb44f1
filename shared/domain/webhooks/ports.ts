import type { IdempotencyCompletion } from '../idempotency.ts';
import type { Vault } from '../vault.ts';
import type { HostResolver, UrlPolicy } from './url-rules.ts';
import type { DeliveryAttempt, MessageRef, SettledMessage, WebhookEndpoint, WebhookMessage } from './model.ts';

export interface EndpointStore {
  /**
   * Adds an endpoint if the organization has fewer than `limit`; false when it
   * has as many. With `completion`, the Idempotency-Key's answer is stored in
   * the same transaction.
   */
  create(endpoint: WebhookEndpoint, limit: number, completion?: IdempotencyCompletion<WebhookEndpoint>): Promise<boolean>;
  get(organizationId: string, endpointId: string): Promise<WebhookEndpoint | undefined>;
  /** All of an organization's endpoints (at most 16: one Query). */
  list(organizationId: string): Promise<WebhookEndpoint[]>;
  /** Writes `next` if the stored endpoint is still as `current` left it (its updated_at); false otherwise. */
  replace(current: WebhookEndpoint, next: WebhookEndpoint): Promise<boolean>;
  /** Removes the endpoint and frees its place under the limit; false when it was gone. */
  remove(organizationId: string, endpointId: string): Promise<boolean>;
  /** Stamps the start of a run of failures, unless one is running. */
  markFailing(endpoint: WebhookEndpoint, at: string): Promise<void>;
  /** Ends a run of failures. */
  clearFailing(endpoint: WebhookEndpoint): Promise<void>;
  /** Disables an enabled endpoint with the reason. */
  disable(endpoint: WebhookEndpoint, reason: NonNullable<WebhookEndpoint['disabled_reason']>, at: string): Promise<void>;
}

export interface MessageStore {
  /** Adds a message to its record's lane; false when it is there already (a redelivered event). */
  add(message: WebhookMessage): Promise<boolean>;
  /** Adds many at once (the fan-out's batch), each unless it is there already. */
  addAll(messages: readonly WebhookMessage[]): Promise<void>;
  /** The earliest message of the record's lane for the endpoint, read consistently, and whether a later one is behind it. */
  front(endpointId: string, recordId: string): Promise<{ head: WebhookMessage; more: boolean } | undefined>;
  get(ref: MessageRef): Promise<WebhookMessage | undefined>;
  /** Claims the message for one attempt until `until`; false when another sender holds it or it is gone. */
  lease(message: WebhookMessage, until: string): Promise<boolean>;
  /** Counts an attempt and when the next is due; releases the lease. */
  reschedule(message: WebhookMessage, attempts: number, nextAttemptAt: string): Promise<void>;
  /** Delivered: leaves its lane. */
  remove(message: WebhookMessage): Promise<void>;
  /** Held or failed: leaves its lane for the endpoint's settled messages (in one transaction), for `recover`. */
  settle(message: SettledMessage): Promise<void>;
  /** Settled messages created in [since, until], oldest first. */
  settledBetween(endpointId: string, since: string, until: string): Promise<SettledMessage[]>;
  /** A settled message was queued again under a new id: it leaves the settled ones. */
  forgetSettled(message: SettledMessage): Promise<void>;
}

export interface AttemptPage {
  attempts: DeliveryAttempt[];
  nextCursor?: string;
}

export interface AttemptStore {
  record(attempt: DeliveryAttempt): Promise<void>;
  /** Newest first. */
  list(endpointId: string, page: { pageSize: number; pageIndex: number; cursor?: string | undefined }): Promise<AttemptPage>;
}

/**
 * Bounds the deliveries to one endpoint running at once, and keeps the
 * endpoint's backlog: messages that found every slot held wait parked, out of
 * the queue, and each freed slot takes one out.
 */
export interface EndpointSlots {
  /** A slot held until `until`, or undefined when all are taken. */
  acquire(endpointId: string, until: number): Promise<number | undefined>;
  /** Resolves when this container frees one of the endpoint's slots, or after `ms`: a sender waiting for a slot tries again then. */
  nextRelease(endpointId: string, ms: number): Promise<void>;
  /** Frees the slot; true when the endpoint has a backlog flagged (take a parked message out: `drained`). */
  release(endpointId: string, slot: number): Promise<boolean>;
  /** Of these endpoints, those with a backlog flagged and every slot held: a new message parks behind the backlog. */
  backlogged(endpointIds: readonly string[]): Promise<Set<string>>;
  /**
   * Parks messages of one endpoint and flags its backlog; true when a slot is
   * free by then, so the caller takes a message out itself (no holder may be
   * left to do it).
   */
  park(refs: readonly MessageRef[], at: string): Promise<boolean>;
  /** After a release that read a backlog flagged: one parked message taken out, or undefined (the backlog is gone; the flags with it). */
  drained(endpointId: string): Promise<MessageRef | undefined>;
  /** Whether the message parked at `parkedAt` is still waiting parked (no delivery took it out yet). */
  stillParked(ref: MessageRef, parkedAt: string): Promise<boolean>;
}

/** The delivery queue: one entry per message to attempt. */
export interface DeliveryQueue {
  /** `delaySeconds` (at most 900): the entry shows only then. */
  enqueue(refs: readonly MessageRef[], delaySeconds?: number): Promise<void>;
}

export interface PostResult {
  /** Absent when no answer came. */
  statusCode?: number | undefined;
  outcome: 'delivered' | 'failed' | 'timeout' | 'refused';
  excerpt?: string | undefined;
  durationMs: number;
}

/** Sends one signed POST: https to public addresses only (checked on the address connected to), no redirects, a deadline. */
export type WebhookPoster = (request: { url: string; headers: Record<string, string>; body: string }) => Promise<PostResult>;

export interface EndpointAdminDeps {
  endpoints: EndpointStore;
  vault: Pick<Vault, 'seal'>;
  urlPolicy: UrlPolicy;
  resolve: HostResolver;
  clock: () => Date;
}

export interface DeliveryDeps {
  endpoints: EndpointStore;
  messages: MessageStore;
  attempts: AttemptStore;
  slots: EndpointSlots;
  queue: DeliveryQueue;
  vault: Pick<Vault, 'open'>;
  post: WebhookPoster;
  urlPolicy: UrlPolicy;
  clock: () => Date;
  /** Longest later retry step (seconds): the local runtime shortens the schedule after its first step; absent in AWS. */
  laterRetryCapSeconds?: number | undefined;
  random: () => number;
}
