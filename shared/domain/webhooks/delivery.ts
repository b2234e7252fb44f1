/**
 * Delivery: events fan out to the organization's endpoints as messages in
 * per-record lanes; a sender attempts a lane's head only, inside one of the
 * endpoint's slots, and schedules its retries. docs/webhooks.md tells why
 * each step is where it is.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { WebhookEventType } from '#shared/platform/names.ts';
import { PING_EVENT_TYPE, WEBHOOK_EVENT_TYPES } from '#shared/platform/names.ts';
import type { DeliveryAttempt, MessageRef, SettledMessage, WebhookEndpoint, WebhookMessage } from './model.ts';
import { DISABLE_AFTER_FAILING_MS, FIRST_RETRY_JITTER_SECONDS, PARKED_RECHECK_SECONDS, RESPONSE_EXCERPT_BYTES, RETRY_SCHEDULE_SECONDS, SLOT_LEASE_MS, SLOT_RETRY_MS, SLOT_WAIT_MS, refOf } from './model.ts';
import type { DeliveryDeps } from './ports.ts';
import { signatureHeader } from './signing.ts';
import { checkUrlShape } from './url-rules.ts';

/** An event as the rule hands it to the intake queue (EventBridge's envelope). */
export interface BusEvent {
  readonly 'detail-type': string;
  readonly detail: { readonly event_id: string; readonly organization_id: string; readonly occurred_at: string; readonly paymethod_token?: string; readonly document_id?: string; readonly [member: string]: unknown };
}

/** SQS waits at most 12 hours between receives of one message. */
export const MAX_WAIT_SECONDS = 43_200;

const clampWait = (seconds: number) => Math.min(MAX_WAIT_SECONDS, Math.max(1, Math.ceil(seconds)));

/** The same event for the same endpoint is the same message, however often the event arrives. */
export function messageIdOf(eventId: string, endpointId: string): string {
  return `msg_${createHash('sha256').update(`${eventId}\n${endpointId}`).digest('hex').slice(0, 26)}`;
}

export function subscribes(endpoint: Pick<WebhookEndpoint, 'event_types'>, type: string): boolean {
  return endpoint.event_types.includes('*') || endpoint.event_types.includes(type);
}

/** The Standard Webhooks body: the type, the event's time, the event's detail. */
export function messageBody(type: string, timestamp: string, data: Record<string, unknown>): string {
  return JSON.stringify({ type, timestamp, data });
}

/**
 * Fans a batch of events out: one endpoint Query per organization, one lane
 * entry per matching endpoint (a redelivered event finds its entries there and
 * adds nothing), held at once for a disabled endpoint. A message for an
 * endpoint with a backlog flagged and every slot held is parked behind it here
 * rather than queued, so a burst costs the senders nothing until its turn
 * comes. Answers the events that failed, to be received again.
 */
export async function fanOut(batch: ReadonlyArray<{ id: string; event: BusEvent }>, deps: Pick<DeliveryDeps, 'endpoints' | 'messages' | 'queue' | 'slots' | 'clock'>): Promise<string[]> {
  const failed: string[] = [];
  const byOrganization = new Map<string, Array<{ id: string; event: BusEvent }>>();
  for (const entry of batch) {
    const organizationId = entry.event.detail.organization_id;
    byOrganization.set(organizationId, [...(byOrganization.get(organizationId) ?? []), entry]);
  }
  await Promise.all(
    [...byOrganization].map(async ([organizationId, entries]) => {
      try {
        const endpoints = await deps.endpoints.list(organizationId);
        const messages: WebhookMessage[] = [];
        for (const { event } of entries) {
          const type = WEBHOOK_EVENT_TYPES[event['detail-type'] as keyof typeof WEBHOOK_EVENT_TYPES];
          if (!type) continue;
          for (const endpoint of endpoints.filter((candidate) => subscribes(candidate, type))) {
            const message = messageOf(event, type, endpoint, deps.clock());
            if (endpoint.status === 'disabled') await deps.messages.settle({ ...message, outcome: 'held', settled_at: message.created_at });
            else messages.push(message);
          }
        }
        const refs = messages.map(refOf);
        // Written together: a lane orders its entries by their sort key (commit time), not by when they were written.
        // The backlog flags are read meanwhile: what they say decides only where the entries go once written.
        const [, behind] = await Promise.all([
          deps.messages.addAll(messages),
          refs.length === 0 ? new Set<string>() : deps.slots.backlogged([...new Set(refs.map((ref) => ref.webhook_endpoint_id))]),
        ]);
        // All of them queued or parked, those found already written too: a first try may have failed between the
        // write and the queueing. A second entry of a message is harmless (its lease and its lane decide).
        if (refs.length === 0) return;
        await Promise.all([
          deps.queue.enqueue(refs.filter((ref) => !behind.has(ref.webhook_endpoint_id))),
          ...[...behind].map((endpointId) => parkBehindBacklog(refs.filter((ref) => ref.webhook_endpoint_id === endpointId), deps)),
        ]);
      } catch {
        failed.push(...entries.map((entry) => entry.id));
      }
    }),
  );
  return failed;
}

/**
 * Parks messages of one endpoint, with a safety entry each in the queue
 * (PARKED_RECHECK_SECONDS later) should no finishing delivery take them out;
 * with a slot free by then, takes one out itself.
 */
async function parkBehindBacklog(refs: readonly MessageRef[], deps: Pick<DeliveryDeps, 'slots' | 'queue' | 'clock'>): Promise<void> {
  const at = deps.clock().toISOString();
  const slotFree = await deps.slots.park(refs, at);
  await deps.queue.enqueue(
    refs.map((ref) => ({ ...ref, parked_at: at })),
    PARKED_RECHECK_SECONDS,
  );
  if (!slotFree) return;
  const slot = await deps.slots.acquire(refs[0]!.webhook_endpoint_id, Date.now() + SLOT_LEASE_MS);
  if (slot !== undefined) await freeSlot(refs[0]!.webhook_endpoint_id, slot, deps);
}

/**
 * A slot, tried again after SLOT_RETRY_MS or so, then twice as long each time
 * (or as soon as this container frees one), for up to `waitMs`: an endpoint
 * whose slots are all busy for a moment (a few quick deliveries at once) costs
 * a short wait, not a park and a take-out, and a hung one a few tries.
 */
async function slotWithin(endpointId: string, waitMs: number, deps: Pick<DeliveryDeps, 'slots' | 'random'>): Promise<number | undefined> {
  const deadline = Date.now() + waitMs;
  for (let pauseMs = SLOT_RETRY_MS; ; pauseMs *= 2) {
    const slot = await deps.slots.acquire(endpointId, Date.now() + SLOT_LEASE_MS);
    if (slot !== undefined || Date.now() >= deadline) return slot;
    await deps.slots.nextRelease(endpointId, Math.min(deadline - Date.now(), pauseMs / 2 + deps.random() * pauseMs));
  }
}

/** A slot freed: the release reads the backlog flag back; with one flagged, one parked message is taken out and queued (self-clocking). */
async function freeSlot(endpointId: string, slot: number, deps: Pick<DeliveryDeps, 'slots' | 'queue'>): Promise<void> {
  if (!(await deps.slots.release(endpointId, slot))) return;
  const next = await deps.slots.drained(endpointId);
  if (next) await deps.queue.enqueue([next]);
}

function messageOf(event: BusEvent, type: WebhookEventType, endpoint: WebhookEndpoint, now: Date): WebhookMessage {
  const { detail } = event;
  return {
    message_id: messageIdOf(detail.event_id, endpoint.webhook_endpoint_id),
    webhook_endpoint_id: endpoint.webhook_endpoint_id,
    organization_id: endpoint.organization_id,
    record_id: detail.paymethod_token ?? detail.document_id ?? detail.event_id,
    event_type: type,
    event_id: detail.event_id,
    occurred_at: detail.occurred_at,
    body: messageBody(type, detail.occurred_at, detail),
    created_at: now.toISOString(),
    attempts: 0,
    next_attempt_at: now.toISOString(),
  };
}

/** One `webhook.ping` message, in a lane of its own. */
export async function ping(endpoint: WebhookEndpoint, deps: Pick<DeliveryDeps, 'messages' | 'queue' | 'clock'>): Promise<void> {
  const now = deps.clock().toISOString();
  const messageId = `msg_${randomUUID().replaceAll('-', '').slice(0, 26)}`;
  const message: WebhookMessage = {
    message_id: messageId,
    webhook_endpoint_id: endpoint.webhook_endpoint_id,
    organization_id: endpoint.organization_id,
    record_id: messageId,
    event_type: PING_EVENT_TYPE,
    event_id: `evt_ping_${messageId.slice(4)}`,
    occurred_at: now,
    body: messageBody(PING_EVENT_TYPE, now, { webhook_endpoint_id: endpoint.webhook_endpoint_id, organization_id: endpoint.organization_id }),
    created_at: now,
    attempts: 0,
    next_attempt_at: now,
  };
  await deps.messages.add(message);
  await deps.queue.enqueue([refOf(message)]);
}

/**
 * Sends again the held and failed messages created in [since, until], each
 * under a new `webhook-id`, back in their records' lanes (so in commit order
 * per record). Answers how many.
 */
export async function recover(endpoint: WebhookEndpoint, range: { since: Date; until: Date }, deps: Pick<DeliveryDeps, 'messages' | 'queue' | 'clock'>): Promise<number> {
  const settled = await deps.messages.settledBetween(endpoint.webhook_endpoint_id, range.since.toISOString(), range.until.toISOString());
  const now = deps.clock().toISOString();
  const refs: MessageRef[] = [];
  for (const old of settled) {
    const { outcome: _outcome, settled_at: _settled, ...rest } = old;
    const message: WebhookMessage = { ...rest, message_id: `msg_${randomUUID().replaceAll('-', '').slice(0, 26)}`, attempts: 0, next_attempt_at: now, created_at: now };
    await deps.messages.add(message);
    await deps.messages.forgetSettled(old);
    refs.push(refOf(message));
  }
  await deps.queue.enqueue(refs);
  return refs.length;
}

/** What the queue does with the entry: drop it, or show it again after so many seconds. */
export type DeliveryVerdict = { done: true } | { done: false; retryAfterSeconds: number };

const DONE: DeliveryVerdict = { done: true };

/** Seconds before retry `attempts` (1: the first retry), shortened after the first only by configuration. */
export function retryDelaySeconds(attempts: number, deps: Pick<DeliveryDeps, 'laterRetryCapSeconds' | 'random'>): number | undefined {
  const step = RETRY_SCHEDULE_SECONDS[attempts - 1];
  if (step === undefined) return undefined;
  if (attempts === 1) return step - FIRST_RETRY_JITTER_SECONDS + Math.round(deps.random() * 2 * FIRST_RETRY_JITTER_SECONDS);
  return deps.laterRetryCapSeconds !== undefined ? Math.min(step, deps.laterRetryCapSeconds) : step;
}

/**
 * One queue entry: attempt the message if it heads its record's lane and is
 * due, inside one of the endpoint's slots. Anything else waits: behind an
 * earlier message of the record (until that one is due), or parked for a slot.
 */
export async function deliver(ref: MessageRef, deps: DeliveryDeps): Promise<DeliveryVerdict> {
  const now = deps.clock();
  // A parked message's safety entry: while it is still parked, a finishing delivery will take it out; look again later.
  if (ref.parked_at !== undefined && (await deps.slots.stillParked(ref, ref.parked_at))) {
    return { done: false, retryAfterSeconds: clampWait(Math.max(PARKED_RECHECK_SECONDS, 2 * ((now.getTime() - Date.parse(ref.parked_at)) / 1000))) };
  }
  const endpointId = ref.webhook_endpoint_id;
  // Both reads at once: the common case needs both.
  const [lane, endpoint] = await Promise.all([deps.messages.front(endpointId, ref.record_id), deps.endpoints.get(ref.organization_id, endpointId)]);
  const head = lane?.head;
  if (!head) return DONE;
  if (head.message_id !== ref.message_id) {
    if (!(await deps.messages.get(ref))) return DONE;
    return { done: false, retryAfterSeconds: clampWait((Date.parse(head.next_attempt_at) - now.getTime()) / 1000 + 1) };
  }
  const dueIn = Date.parse(head.next_attempt_at) - now.getTime();
  if (dueIn > 1000) return { done: false, retryAfterSeconds: clampWait(dueIn / 1000) };
  if (!endpoint) {
    await deps.messages.remove(head);
    return DONE;
  }
  if (endpoint.status === 'disabled') {
    await settleAndAdvance(head, 'held', deps);
    return DONE;
  }
  // Claimed before a slot is sought: a duplicate entry of the same message takes no slot.
  if (!(await deps.messages.lease(head, new Date(now.getTime() + SLOT_LEASE_MS).toISOString()))) return DONE;
  const slot = await slotWithin(endpointId, SLOT_WAIT_MS, deps);
  if (slot === undefined) {
    // Every slot held for longer: the message waits parked, out of the queue, so an endpoint's backlog is not received
    // over and over. Its claim goes first, so it is attempted as soon as it is taken out.
    await deps.messages.reschedule(head, head.attempts, head.next_attempt_at);
    await parkBehindBacklog([refOf(head)], deps);
    return DONE;
  }
  // A slot bounds the requests to the endpoint: it is freed as soon as the answer is in, before the bookkeeping.
  let freeing: Promise<void> | undefined;
  const answered = () => {
    freeing ??= freeSlot(endpointId, slot, deps).catch(() => undefined);
  };
  try {
    return await attempt(head, lane.more, endpoint, answered, deps);
  } finally {
    answered();
    await freeing;
  }
}

/** `followed`: the lane held a later message when it was read, so the next is queued at once when this one is done. */
async function attempt(message: WebhookMessage, followed: boolean, endpoint: WebhookEndpoint, answered: () => void, deps: DeliveryDeps): Promise<DeliveryVerdict> {
  const startedAt = deps.clock();
  const timestamp = Math.floor(startedAt.getTime() / 1000);
  const secrets = await secretsInForce(endpoint, startedAt, deps);
  let result: Awaited<ReturnType<DeliveryDeps['post']>>;
  try {
    checkUrlShape(endpoint.url, deps.urlPolicy);
    result = await deps.post({
      url: endpoint.url,
      body: message.body,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'payments-webhooks/1',
        'webhook-id': message.message_id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(secrets, message.message_id, timestamp, message.body),
      },
    });
  } catch {
    // The URL broke the rules since it was registered (or the request could not be built): refused, like a refused address.
    result = { outcome: 'refused', durationMs: deps.clock().getTime() - startedAt.getTime() };
  }
  answered();
  if (result.outcome === 'delivered') {
    await Promise.all([deps.attempts.record(attemptOf(message, startedAt, result)), deps.messages.remove(message)]);
    if (endpoint.failing_since !== undefined) await deps.endpoints.clearFailing(endpoint);
    // A message added after the lane was read was queued by its own fan-out; it waits a second or two behind this one.
    if (followed) await advance(message, deps);
    return DONE;
  }
  await deps.attempts.record(attemptOf(message, startedAt, result));
  const at = deps.clock().toISOString();
  if (result.statusCode === 410) {
    await deps.endpoints.disable(endpoint, 'endpoint_gone', at);
    await settleAndAdvance(message, 'held', deps);
    return DONE;
  }
  if (endpoint.failing_since === undefined) await deps.endpoints.markFailing(endpoint, at);
  else if (Date.parse(at) - Date.parse(endpoint.failing_since) >= DISABLE_AFTER_FAILING_MS) {
    await deps.endpoints.disable(endpoint, 'failing_for_five_days', at);
    await settleAndAdvance(message, 'held', deps);
    return DONE;
  }
  const attempts = message.attempts + 1;
  const delay = retryDelaySeconds(attempts, deps);
  if (delay === undefined) {
    await settleAndAdvance(message, 'failed', deps);
    return DONE;
  }
  await deps.messages.reschedule(message, attempts, new Date(Date.parse(at) + delay * 1000).toISOString());
  return { done: false, retryAfterSeconds: delay };
}

function attemptOf(message: WebhookMessage, startedAt: Date, result: Awaited<ReturnType<DeliveryDeps['post']>>): DeliveryAttempt {
  return {
    attempt_id: `att_${randomUUID().replaceAll('-', '').slice(0, 22)}`,
    webhook_endpoint_id: message.webhook_endpoint_id,
    message_id: message.message_id,
    event_type: message.event_type,
    event_id: message.event_id,
    attempted_at: startedAt.toISOString(),
    ...(result.statusCode !== undefined ? { status_code: result.statusCode } : {}),
    outcome: result.outcome,
    duration_ms: Math.max(0, Math.round(result.durationMs)),
    ...(result.excerpt !== undefined ? { response_excerpt: Buffer.from(result.excerpt, 'utf8').subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8') } : {}),
  };
}

async function settleAndAdvance(message: WebhookMessage, outcome: SettledMessage['outcome'], deps: Pick<DeliveryDeps, 'messages' | 'queue' | 'clock'>): Promise<void> {
  await deps.messages.settle({ ...message, outcome, settled_at: deps.clock().toISOString() });
  await advance(message, deps);
}

/** The lane's next message is queued as soon as its predecessor is done, rather than when its own wait ends. */
async function advance(message: WebhookMessage, deps: Pick<DeliveryDeps, 'messages' | 'queue'>): Promise<void> {
  const next = await deps.messages.front(message.webhook_endpoint_id, message.record_id);
  if (next) await deps.queue.enqueue([refOf(next.head)]);
}

/** Opened secrets, kept a minute at most per container: a delivery burst opens each endpoint's once, not once per message. */
const SECRET_CACHE_MS = 60_000;
const openedSecrets = new Map<string, { secrets: string[]; until: number }>();

async function secretsInForce(endpoint: WebhookEndpoint, now: Date, deps: Pick<DeliveryDeps, 'vault'>): Promise<string[]> {
  const previousInForce = endpoint.previous_secret !== undefined && endpoint.previous_secret_expires_at !== undefined && Date.parse(endpoint.previous_secret_expires_at) > now.getTime();
  const key = `${endpoint.webhook_endpoint_id}#${endpoint.updated_at}#${previousInForce}`;
  const cached = openedSecrets.get(key);
  if (cached && cached.until > now.getTime()) return cached.secrets;
  const binding = { organizationId: endpoint.organization_id, recordToken: endpoint.webhook_endpoint_id };
  const secrets = [await deps.vault.open(endpoint.secret, binding)];
  if (previousInForce) secrets.push(await deps.vault.open(endpoint.previous_secret!, binding));
  for (const [name, entry] of openedSecrets) if (entry.until <= now.getTime() || name.startsWith(`${endpoint.webhook_endpoint_id}#`)) openedSecrets.delete(name);
  openedSecrets.set(key, { secrets, until: now.getTime() + SECRET_CACHE_MS });
  return secrets;
}
