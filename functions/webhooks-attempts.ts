import { getEndpoint } from '#shared/domain/webhooks/endpoints.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { listLinks, listResponse, parseListQuery } from '#shared/http/list-query.ts';
import { pathParams } from '#shared/http/request.ts';
import { webhookAttemptView, webhookEndpointUrl } from '#shared/http/webhooks.ts';
import { endpointReadDeps, webhookAttempts } from '#shared/wiring/webhooks.ts';

/** GET .../webhook_endpoints/{webhook_endpoint_id}/attempts: newest first, 30 days. */
export const handler = apiHandler('webhooks-attempts', async (request) => {
  const { organization_id: organizationId, webhook_endpoint_id: endpointId } = pathParams(request, 'organization_id', 'webhook_endpoint_id');
  const { pageSize, pageIndex, cursor } = parseListQuery(request.query, { filters: {} });
  await getEndpoint(organizationId, endpointId, endpointReadDeps());
  const page = await webhookAttempts().list(endpointId, { pageSize, pageIndex, cursor });
  return listResponse({
    results: page.attempts.map(webhookAttemptView),
    pageSize,
    pageIndex,
    homeOrganizationId: request.caller?.organizationId as string,
    resourceSpecific: {},
    links: listLinks(`${webhookEndpointUrl(request, organizationId, endpointId)}/attempts`, request.query, page.nextCursor ? { pageIndex: pageIndex + 1, cursor: page.nextCursor } : undefined),
  });
});
