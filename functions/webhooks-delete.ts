import { deleteEndpoint } from '#shared/domain/webhooks/endpoints.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { pathParams } from '#shared/http/request.ts';
import { deleted } from '#shared/http/response.ts';
import { endpointReadDeps } from '#shared/wiring/webhooks.ts';

/** DELETE .../webhook_endpoints/{webhook_endpoint_id}: its pending messages find no endpoint and are dropped. */
export const handler = apiHandler('webhooks-delete', async (request) => {
  const { organization_id: organizationId, webhook_endpoint_id: endpointId } = pathParams(request, 'organization_id', 'webhook_endpoint_id');
  await deleteEndpoint(organizationId, endpointId, endpointReadDeps());
  return deleted({ webhook_endpoint_id: endpointId });
});
