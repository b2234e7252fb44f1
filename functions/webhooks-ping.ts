import { ping } from '#shared/domain/webhooks/delivery.ts';
import { getEndpoint } from '#shared/domain/webhooks/endpoints.ts';
import { parseWebhookBody, pingSchema } from '#shared/domain/webhooks/validation.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { pathParams } from '#shared/http/request.ts';
import { accepted } from '#shared/http/response.ts';
import { webhookEndpointUrl } from '#shared/http/webhooks.ts';
import { enqueueDeps } from '#shared/wiring/webhook-delivery.ts';

/** POST .../webhook_endpoints/{webhook_endpoint_id}/ping: 202, one webhook.ping message. */
export const handler = apiHandler('webhooks-ping', async (request) => {
  const { organization_id: organizationId, webhook_endpoint_id: endpointId } = pathParams(request, 'organization_id', 'webhook_endpoint_id');
  parseWebhookBody(pingSchema, request.body);
  const deps = enqueueDeps();
  await ping(await getEndpoint(organizationId, endpointId, deps), deps);
  return accepted({ webhook_endpoint_id: endpointId }, { self: webhookEndpointUrl(request, organizationId, endpointId) });
});
