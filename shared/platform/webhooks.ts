/**
 * Webhook delivery as data: the EventBridge rule that feeds the intake queue,
 * the queues, each function's queue grants, and the timing every part agrees
 * on. CDK (infra/webhooks.ts) builds the rule, queues and grants from this
 * module, and the local runtime routes events and checks queue calls with the
 * same data. Imports nothing but names: the CDK app and the handlers read it.
 */
import type { FunctionSizing } from './function-sizing.ts';
import { EVENT_SOURCES, WEBHOOK_EVENT_TYPES } from './names.ts';

/** The one rule definition: CDK's events.Rule pattern, and what the local EventBridge stand-in matches. */
export const WEBHOOK_RULE = {
  name: 'WebhookIntake',
  eventPattern: {
    source: [EVENT_SOURCES.paymethods, EVENT_SOURCES.documents],
    'detail-type': Object.keys(WEBHOOK_EVENT_TYPES),
  },
  /**
   * The target's MessageGroupId, a path into the event (EventBridge's dynamic
   * path parameter): the intake is an SQS fair queue grouped by organization,
   * so one organization's burst does not hold back another's events.
   */
  messageGroupIdPath: '$.detail.organization_id',
} as const;

/** The intake message group of an event, as EventBridge fills WEBHOOK_RULE.messageGroupIdPath. */
export function webhookIntakeGroup(event: { detail?: unknown }): string | undefined {
  const organizationId = (event.detail as { organization_id?: unknown } | undefined)?.organization_id;
  return typeof organizationId === 'string' ? organizationId : undefined;
}

/** Whether an event matches WEBHOOK_RULE, as EventBridge matches it (exact values on both fields). */
export function matchesWebhookRule(event: { source?: unknown; 'detail-type'?: unknown }): boolean {
  return (WEBHOOK_RULE.eventPattern.source as readonly unknown[]).includes(event.source) && (WEBHOOK_RULE.eventPattern['detail-type'] as readonly unknown[]).includes(event['detail-type']);
}

export type WebhookQueue = 'intake' | 'delivery';

export interface WebhookQueueSpec {
  /** Physical name suffix; CDK prefixes the stack's name, the local runtime `payments-local-`. */
  readonly name: string;
  /** Longest a message stays: past the retry schedule (about 3.2 days) with margin. */
  readonly retentionSeconds: number;
  /** Longer than the consumer's timeout, as Lambda asks of a queue it polls. */
  readonly visibilityTimeoutSeconds: number;
  /** Receives before a message goes to the queue's dead-letter queue. */
  readonly maxReceiveCount: number;
}

/**
 * The intake queue (standard) takes the rule's events; the delivery queue
 * (standard, with MessageGroupId = the endpoint: an SQS fair queue) carries one
 * message per event and endpoint. A delivery message is received once per
 * attempt and once per wait for an endpoint slot or an earlier message of its
 * record, so its redrive count is high: the retry schedule, not the count,
 * decides when it gives up (it then leaves the queue itself).
 */
export const WEBHOOK_QUEUES: Readonly<Record<WebhookQueue, WebhookQueueSpec>> = {
  intake: { name: 'webhook-intake', retentionSeconds: 4 * 86_400, visibilityTimeoutSeconds: 6 * 60, maxReceiveCount: 5 },
  delivery: { name: 'webhook-delivery', retentionSeconds: 14 * 86_400, visibilityTimeoutSeconds: 2 * 60, maxReceiveCount: 1000 },
};

export type QueueAction = 'SendMessage' | 'ReceiveMessage' | 'DeleteMessage' | 'ChangeMessageVisibility' | 'GetQueueAttributes';

export interface QueueGrant {
  readonly queue: WebhookQueue;
  readonly actions: readonly QueueAction[];
}

/** What polling a queue through a Lambda event source mapping needs (the mapping calls these with the function's role). */
export const CONSUMER_ACTIONS: readonly QueueAction[] = ['ReceiveMessage', 'DeleteMessage', 'ChangeMessageVisibility', 'GetQueueAttributes'];

/** How each webhook function reads its queue (event source mappings), in AWS and locally. */
export interface QueueTrigger {
  readonly handler: string;
  readonly queue: WebhookQueue;
  readonly batchSize: number;
  readonly maxBatchingWindowSeconds: number;
  /** Lambda's MaximumConcurrency for the mapping (2..1000). */
  readonly maximumConcurrency: number;
  readonly sizing: FunctionSizing;
}

export const WEBHOOK_QUEUE_TRIGGERS: readonly QueueTrigger[] = [
  // Ten events a batch: one endpoint Query per organization in it.
  { handler: 'webhooks-fanout', queue: 'intake', batchSize: 10, maxBatchingWindowSeconds: 0, maximumConcurrency: 20, sizing: { memoryMb: 256, timeoutSeconds: 60 } },
  // One message an invocation: a slow endpoint holds one invocation, not a batch of other endpoints' messages.
  { handler: 'webhooks-send', queue: 'delivery', batchSize: 1, maxBatchingWindowSeconds: 0, maximumConcurrency: 100, sizing: { memoryMb: 256, timeoutSeconds: 60 } },
];

/** Functions outside the route table that handle webhooks, with the queues they use. */
export const WEBHOOK_QUEUE_GRANTS: Readonly<Record<string, readonly QueueGrant[]>> = {
  'webhooks-fanout': [
    { queue: 'intake', actions: CONSUMER_ACTIONS },
    { queue: 'delivery', actions: ['SendMessage'] },
  ],
  'webhooks-send': [{ queue: 'delivery', actions: [...CONSUMER_ACTIONS, 'SendMessage'] }],
  // Ping and recover enqueue messages they stored.
  'webhooks-ping': [{ queue: 'delivery', actions: ['SendMessage'] }],
  'webhooks-recover': [{ queue: 'delivery', actions: ['SendMessage'] }],
};

/** IAM's reading of queue grants: some grant names the queue and the action. */
export function queueGrantsAllow(grants: readonly QueueGrant[], queue: WebhookQueue | undefined, action: string): boolean {
  return queue !== undefined && grants.some((grant) => grant.queue === queue && (grant.actions as readonly string[]).includes(action));
}
