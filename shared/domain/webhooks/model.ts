/**
 * Webhook endpoints, their messages and delivery attempts, as the domain
 * sees them (docs/webhooks.md). Nothing here knows DynamoDB, SQS or HTTP.
 */
import type { SealedSecret } from '../vault.ts';
import type { WebhookEventType } from '#shared/platform/names.ts';

export type EndpointStatus = 'enabled' | 'disabled';
export type DisabledReason = 'disabled_by_merchant' | 'endpoint_gone' | 'failing_for_five_days';

export interface WebhookEndpoint {
  readonly webhook_endpoint_id: string;
  readonly organization_id: string;
  readonly url: string;
  /** Event types, or `["*"]` for all of them. */
  readonly event_types: readonly string[];
  readonly description?: string | undefined;
  readonly status: EndpointStatus;
  readonly disabled_reason?: DisabledReason | undefined;
  readonly created_at: string;
  readonly updated_at: string;
  /** When the current run of failed attempts began (absent after any delivered one). */
  readonly failing_since?: string | undefined;
  /** The signing secret (`whsec_...`), sealed under KMS and bound to the organization and the endpoint. */
  readonly secret: SealedSecret;
  /** After a roll: the previous secret, also signing until `previous_secret_expires_at`. */
  readonly previous_secret?: SealedSecret | undefined;
  readonly previous_secret_expires_at?: string | undefined;
}

/** One event (or ping) for one endpoint: the `webhook-id` and the exact body every attempt sends. */
export interface WebhookMessage {
  readonly message_id: string;
  readonly webhook_endpoint_id: string;
  readonly organization_id: string;
  /** The record it is about (`mth_...`, `doc_...`), or the message itself for a ping: messages of one record go in order. */
  readonly record_id: string;
  readonly event_type: WebhookEventType | 'webhook.ping';
  readonly event_id: string;
  /** The event's commit time; orders one record's messages. */
  readonly occurred_at: string;
  /** `{"type","timestamp","data"}` as sent, byte for byte on every attempt. */
  readonly body: string;
  readonly created_at: string;
  /** Attempts made so far. */
  readonly attempts: number;
  /** When the next attempt is due (the first: at once). */
  readonly next_attempt_at: string;
}

/** A message no longer in its record's lane: held while its endpoint was disabled, or failed after the whole schedule. `recover` sends them again. */
export interface SettledMessage extends WebhookMessage {
  readonly outcome: 'held' | 'failed';
  readonly settled_at: string;
}

export type AttemptOutcome = 'delivered' | 'failed' | 'timeout' | 'refused';

export interface DeliveryAttempt {
  readonly attempt_id: string;
  readonly webhook_endpoint_id: string;
  readonly message_id: string;
  readonly event_type: string;
  readonly event_id: string;
  readonly attempted_at: string;
  readonly status_code?: number | undefined;
  readonly outcome: AttemptOutcome;
  readonly duration_ms: number;
  readonly response_excerpt?: string | undefined;
}

/** Where a message sits in its lane: the endpoint, the record, and its place in commit order. */
export interface MessageRef {
  readonly webhook_endpoint_id: string;
  readonly organization_id: string;
  readonly record_id: string;
  readonly message_id: string;
  readonly occurred_at: string;
  /** Only on a parked message's safety entry: when it was parked (which finds its parked item). */
  readonly parked_at?: string;
}

export const refOf = (message: WebhookMessage): MessageRef => ({
  webhook_endpoint_id: message.webhook_endpoint_id,
  organization_id: message.organization_id,
  record_id: message.record_id,
  message_id: message.message_id,
  occurred_at: message.occurred_at,
});

export const MAX_ENDPOINTS_PER_ORGANIZATION = 16;
export const MAX_URL_LENGTH = 2048;
export const MAX_DESCRIPTION_LENGTH = 255;
/** A roll keeps the previous secret signing this long by default, and at most a week. */
export const DEFAULT_PREVIOUS_SECRET_SECONDS = 86_400;
export const MAX_PREVIOUS_SECRET_SECONDS = 604_800;
/** The first bytes of an answer kept with its attempt. */
export const RESPONSE_EXCERPT_BYTES = 1024;

/** Concurrent deliveries to one endpoint at most (its slots, shared/store/webhooks.ts). */
export const ENDPOINT_CONCURRENCY = 8;
/** A delivery's answer must come within this. */
export const DELIVERY_TIMEOUT_MS = 15_000;
/** An endpoint slot is leased for longer than a delivery can take, so a crashed sender's slot frees itself. */
export const SLOT_LEASE_MS = DELIVERY_TIMEOUT_MS + 15_000;
/**
 * A sender that finds every slot held tries again for this long before the
 * message parks (a burst parks; a moment's crowd does not). Short, because a
 * waiting sender is a sender the other endpoints cannot use: behind a hung
 * endpoint, every message waits this long before it parks.
 */
export const SLOT_WAIT_MS = 1_000;
/** Its first pause before trying again (jittered: half to one and a half times), doubled after each try. */
export const SLOT_RETRY_MS = 100;

/**
 * Delays before each retry, in seconds: the first 5 to 15 (jittered around
 * 10), then growing, no step above SQS's 12-hour visibility cap. They add up
 * to about 3.2 days (at least three days, as promised).
 */
export const RETRY_SCHEDULE_SECONDS: readonly number[] = [10, 60, 300, 1_800, 7_200, 18_000, 36_000, 43_200, 43_200, 43_200, 43_200, 43_200];
/** The first retry's jitter: 10 s +- 5 s. */
export const FIRST_RETRY_JITTER_SECONDS = 5;
/** An endpoint whose every attempt failed for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * 86_400_000;
/** Delivery attempts are kept this long (TTL). */
export const ATTEMPT_RETENTION_DAYS = 30;

/** A parked message is also queued this much later (SQS's longest delay): if no finishing delivery takes it out first, it tries again then. */
export const PARKED_RECHECK_SECONDS = 900;
