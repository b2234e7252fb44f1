import { getEndpoint } from '#shared/domain/webhooks/endpoints.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { pathParams } from '#shared/http/request.ts';
import { fetched } from '#shared/http/response.ts';
import { webhookEndpointUrl, webhookEndpointView } from '#shared/http/webhooks.ts';
import { endpointReadDeps } from '#shared/wiring/webhooks.ts';

/** GET .../webhook_endpoints/{webhook_endpoint_id}. */
export const handler = apiHandler('webhooks-get', async (request) => {
  const { organization_id: organizationId, webhook_endpoint_id: endpointId } = pathParams(request, 'organization_id', 'webhook_endpoint_id');
  const endpoint = await getEndpoint(organizationId, endpointId, endpointReadDeps());
  return fetched(webhookEndpointView(endpoint), { self: webhookEndpointUrl(request, organizationId, endpointId) });
});
