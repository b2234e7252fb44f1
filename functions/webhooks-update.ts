import { updateEndpoint } from '#shared/domain/webhooks/endpoints.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { pathParams } from '#shared/http/request.ts';
import { updated } from '#shared/http/response.ts';
import { webhookEndpointUrl, webhookEndpointView } from '#shared/http/webhooks.ts';
import { endpointUpdateDeps } from '#shared/wiring/webhooks.ts';

/** PUT .../webhook_endpoints/{webhook_endpoint_id}: partial; enabling again sends only messages created from then on. */
export const handler = apiHandler('webhooks-update', async (request) => {
  const { organization_id: organizationId, webhook_endpoint_id: endpointId } = pathParams(request, 'organization_id', 'webhook_endpoint_id');
  const endpoint = await updateEndpoint(organizationId, endpointId, request.body, endpointUpdateDeps());
  return updated(webhookEndpointView(endpoint), { self: webhookEndpointUrl(request, organizationId, endpointId) });
});
