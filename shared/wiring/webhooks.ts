import { dynamo } from '#shared/aws/dynamodb.ts';
import { resolveHost } from '#shared/aws/webhook-http.ts';
import { config } from '#shared/runtime/config.ts';
import type { EndpointAdminDeps } from '#shared/domain/webhooks/ports.ts';
import { DynamoWebhookAttempts, DynamoWebhookEndpoints, DynamoWebhookMessages } from '#shared/store/webhooks.ts';
import { once } from './once.ts';

// The endpoints API's adapters (the ones that seal a secret are in webhook-secrets.ts). What enqueues and delivers (the SQS client, the poster) is in webhook-delivery.ts,
// so the routes that only read or write endpoints do not bundle the SQS client.
export const webhookEndpoints = /* @__PURE__ */ once(() => new DynamoWebhookEndpoints(dynamo, config.tableName));
export const webhookMessages = /* @__PURE__ */ once(() => new DynamoWebhookMessages(dynamo, config.webhookTableName));
export const webhookAttempts = /* @__PURE__ */ once(() => new DynamoWebhookAttempts(dynamo, config.webhookTableName));
export const clock = () => new Date();

export const urlPolicy = () => ({ allowLoopback: config.webhookAllowLoopback });

/** An update seals nothing: no vault, so the update route neither bundles the KMS client nor needs VAULT_KEY_ID. */
export const endpointUpdateDeps = (): Omit<EndpointAdminDeps, 'vault'> => ({ endpoints: webhookEndpoints(), urlPolicy: urlPolicy(), resolve: resolveHost, clock });
export const endpointReadDeps = () => ({ endpoints: webhookEndpoints() });
