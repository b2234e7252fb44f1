import type * as z from 'zod/mini';
import type { DeliveryAttempt, WebhookEndpoint } from '#shared/domain/webhooks/model.ts';
import { apiUrl } from './links.ts';
import type { ApiRequest } from './request.ts';
import type { webhookAttemptViewSchema, webhookEndpointViewSchema } from './schemas/webhooks.ts';

/** What an endpoint shows: never its secret, sealed or not, nor its failure bookkeeping. */
export function webhookEndpointView(endpoint: WebhookEndpoint): z.output<typeof webhookEndpointViewSchema> {
  return {
    webhook_endpoint_id: endpoint.webhook_endpoint_id,
    organization_id: endpoint.organization_id,
    url: endpoint.url,
    event_types: [...endpoint.event_types],
    ...(endpoint.description !== undefined ? { description: endpoint.description } : {}),
    status: endpoint.status,
    ...(endpoint.status === 'disabled' && endpoint.disabled_reason !== undefined ? { disabled_reason: endpoint.disabled_reason } : {}),
    created_at: endpoint.created_at,
    updated_at: endpoint.updated_at,
  };
}

export function webhookAttemptView(attempt: DeliveryAttempt): z.output<typeof webhookAttemptViewSchema> {
  return {
    attempt_id: attempt.attempt_id,
    message_id: attempt.message_id,
    event_type: attempt.event_type,
    event_id: attempt.event_id,
    attempted_at: attempt.attempted_at,
    ...(attempt.status_code !== undefined ? { status_code: attempt.status_code } : {}),
    outcome: attempt.outcome,
    duration_ms: attempt.duration_ms,
    ...(attempt.response_excerpt !== undefined ? { response_excerpt: attempt.response_excerpt } : {}),
  };
}

export const webhookEndpointsUrl = (request: Pick<ApiRequest, 'baseUrl'>, organizationId: string) => apiUrl(request, 'organizations', organizationId, 'webhook_endpoints');
export const webhookEndpointUrl = (request: Pick<ApiRequest, 'baseUrl'>, organizationId: string, endpointId: string) => apiUrl(request, 'organizations', organizationId, 'webhook_endpoints', endpointId);
