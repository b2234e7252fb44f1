import { listEndpoints } from '#shared/domain/webhooks/endpoints.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { listLinks, listResponse, parseListQuery } from '#shared/http/list-query.ts';
import { pathParams } from '#shared/http/request.ts';
import { webhookEndpointUrl, webhookEndpointView, webhookEndpointsUrl } from '#shared/http/webhooks.ts';
import { endpointReadDeps } from '#shared/wiring/webhooks.ts';

/** GET .../webhook_endpoints: at most 16, so every page is a slice of one Query; links.next carries page_index alone. */
export const handler = apiHandler('webhooks-list', async (request) => {
  const { organization_id: organizationId } = pathParams(request, 'organization_id');
  const { pageSize, pageIndex } = parseListQuery(request.query, { filters: {} });
  const endpoints = await listEndpoints(organizationId, endpointReadDeps());
  const page = endpoints.slice(pageIndex * pageSize, (pageIndex + 1) * pageSize);
  const more = endpoints.length > (pageIndex + 1) * pageSize;
  return listResponse({
    results: page.map((endpoint) => ({ ...webhookEndpointView(endpoint), links: { self: webhookEndpointUrl(request, organizationId, endpoint.webhook_endpoint_id) } })),
    pageSize,
    pageIndex,
    homeOrganizationId: request.caller?.organizationId as string,
    resourceSpecific: {},
    links: listLinks(webhookEndpointsUrl(request, organizationId), request.query, more ? { pageIndex: pageIndex + 1 } : undefined),
  });
});
