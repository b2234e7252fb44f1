import { dynamo } from '#shared/aws/dynamodb.ts';
import { SqsDeliveryQueue, sqs } from '#shared/aws/webhook-queue.ts';
import { resolveHost, webhookPoster } from '#shared/aws/webhook-http.ts';
import { config } from '#shared/runtime/config.ts';
import type { DeliveryDeps, EndpointAdminDeps } from '#shared/domain/webhooks/ports.ts';
import { DynamoEndpointSlots, DynamoWebhookAttempts, DynamoWebhookEndpoints, DynamoWebhookMessages } from '#shared/store/webhooks.ts';
import { vault } from './number-keys.ts';
import { once } from './once.ts';

export const webhookEndpoints = /* @__PURE__ */ once(() => new DynamoWebhookEndpoints(dynamo, config.tableName));
export const webhookMessages = /* @__PURE__ */ once(() => new DynamoWebhookMessages(dynamo, config.tableName));
export const webhookAttempts = /* @__PURE__ */ once(() => new DynamoWebhookAttempts(dynamo, config.tableName));
export const deliveryQueue = /* @__PURE__ */ once(() => new SqsDeliveryQueue(sqs, config.webhookDeliveryQueueUrl));
const poster = /* @__PURE__ */ once(() => webhookPoster({ allowLoopback: config.webhookAllowLoopback }));
const clock = () => new Date();

export const urlPolicy = () => ({ allowLoopback: config.webhookAllowLoopback });

/** The vault is built when a use case first seals: updates seal nothing and have no VAULT_KEY_ID. */
export const endpointAdminDeps = (): EndpointAdminDeps => ({
  endpoints: webhookEndpoints(),
  get vault() {
    return vault();
  },
  urlPolicy: urlPolicy(),
  resolve: resolveHost,
  clock,
});
export const endpointReadDeps = () => ({ endpoints: webhookEndpoints() });
export const enqueueDeps = () => ({ endpoints: webhookEndpoints(), messages: webhookMessages(), queue: deliveryQueue(), clock });
export const deliveryDeps = (): DeliveryDeps => ({
  endpoints: webhookEndpoints(),
  messages: webhookMessages(),
  attempts: webhookAttempts(),
  slots: new DynamoEndpointSlots(dynamo, config.tableName),
  queue: deliveryQueue(),
  vault: vault(),
  post: poster(),
  urlPolicy: urlPolicy(),
  clock,
  laterRetryCapSeconds: config.webhookLaterRetryCapSeconds,
  random: Math.random,
});
