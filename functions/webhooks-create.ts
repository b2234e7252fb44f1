import { createEndpoint } from '#shared/domain/webhooks/endpoints.ts';
import type { WebhookEndpoint } from '#shared/domain/webhooks/model.ts';
import { idempotentApiHandler } from '#shared/http/idempotency.ts';
import { pathParams } from '#shared/http/request.ts';
import { created } from '#shared/http/response.ts';
import { webhookEndpointUrl, webhookEndpointView } from '#shared/http/webhooks.ts';
import { endpointAdminDeps } from '#shared/wiring/webhook-secrets.ts';

/** POST /v3/organizations/{organization_id}/webhook_endpoints: the secret is in this answer only, not in a replay of it. */
export const handler = idempotentApiHandler('webhooks-create', async (request, { completion }) => {
  const { organization_id: organizationId } = pathParams(request, 'organization_id');
  const answer = (endpoint: WebhookEndpoint) => created(webhookEndpointView(endpoint), { self: webhookEndpointUrl(request, organizationId, endpoint.webhook_endpoint_id) });
  const { endpoint, secret } = await createEndpoint(organizationId, request.body, endpointAdminDeps(), completion(answer));
  return created({ ...webhookEndpointView(endpoint), secret }, { self: webhookEndpointUrl(request, organizationId, endpoint.webhook_endpoint_id) });
});
