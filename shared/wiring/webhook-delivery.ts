import { dynamo } from '#shared/aws/dynamodb.ts';
import { SqsDeliveryQueue, sqs } from '#shared/aws/webhook-queue.ts';
import { webhookPoster } from '#shared/aws/webhook-http.ts';
import { config } from '#shared/runtime/config.ts';
import type { DeliveryDeps } from '#shared/domain/webhooks/ports.ts';
import { DynamoEndpointSlots } from '#shared/store/webhooks.ts';
import { vault } from './number-keys.ts';
import { once } from './once.ts';
import { clock, urlPolicy, webhookAttempts, webhookEndpoints, webhookMessages } from './webhooks.ts';

/** The adapters of the functions that enqueue (fan-out, ping, recover) and deliver (send): they carry the SQS client. */
export const deliveryQueue = /* @__PURE__ */ once(() => new SqsDeliveryQueue(sqs, config.webhookDeliveryQueueUrl));
const endpointSlots = /* @__PURE__ */ once(() => new DynamoEndpointSlots(dynamo, config.webhookTableName));
const poster = /* @__PURE__ */ once(() => webhookPoster({ allowLoopback: config.webhookAllowLoopback }));

export const enqueueDeps = () => ({ endpoints: webhookEndpoints(), messages: webhookMessages(), queue: deliveryQueue(), clock });
/** The fan-out also parks behind an endpoint's backlog (the slots keep it). */
export const fanOutDeps = () => ({ ...enqueueDeps(), slots: endpointSlots() });
export const deliveryDeps = (): DeliveryDeps => ({
  endpoints: webhookEndpoints(),
  messages: webhookMessages(),
  attempts: webhookAttempts(),
  slots: endpointSlots(),
  queue: deliveryQueue(),
  vault: vault(),
  post: poster(),
  urlPolicy: urlPolicy(),
  clock,
  laterRetryCapSeconds: config.webhookLaterRetryCapSeconds,
  random: Math.random,
});
