import { rollSecret } from '#shared/domain/webhooks/endpoints.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { pathParams } from '#shared/http/request.ts';
import { recordResponse } from '#shared/http/response.ts';
import { webhookEndpointUrl, webhookEndpointView } from '#shared/http/webhooks.ts';
import { endpointAdminDeps } from '#shared/wiring/webhook-secrets.ts';

/** POST .../webhook_endpoints/{webhook_endpoint_id}/roll_secret: the new secret, in this answer only. */
export const handler = apiHandler('webhooks-roll-secret', async (request) => {
  const { organization_id: organizationId, webhook_endpoint_id: endpointId } = pathParams(request, 'organization_id', 'webhook_endpoint_id');
  const { endpoint, secret } = await rollSecret(organizationId, endpointId, request.body, endpointAdminDeps());
  return recordResponse(200, 'Update Successful.', { ...webhookEndpointView(endpoint), secret, previous_secret_expires_at: endpoint.previous_secret_expires_at }, {
    self: webhookEndpointUrl(request, organizationId, endpointId),
  });
});
