import { recover } from '#shared/domain/webhooks/delivery.ts';
import { getEndpoint } from '#shared/domain/webhooks/endpoints.ts';
import { instantOf, parseWebhookBody, recoverSchema } from '#shared/domain/webhooks/validation.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { pathParams } from '#shared/http/request.ts';
import { accepted } from '#shared/http/response.ts';
import { webhookEndpointUrl } from '#shared/http/webhooks.ts';
import { enqueueDeps } from '#shared/wiring/webhook-delivery.ts';

/** POST .../webhook_endpoints/{webhook_endpoint_id}/recover: 202; held and failed messages of the range go out again. */
export const handler = apiHandler('webhooks-recover', async (request) => {
  const { organization_id: organizationId, webhook_endpoint_id: endpointId } = pathParams(request, 'organization_id', 'webhook_endpoint_id');
  const { since, until } = parseWebhookBody(recoverSchema, request.body);
  const deps = enqueueDeps();
  const messages = await recover(await getEndpoint(organizationId, endpointId, deps), { since: instantOf(since), until: until !== undefined ? instantOf(until) : deps.clock() }, deps);
  return accepted({ webhook_endpoint_id: endpointId, messages }, { self: webhookEndpointUrl(request, organizationId, endpointId) });
});
