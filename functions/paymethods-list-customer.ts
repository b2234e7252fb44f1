import { listPaymethods } from '#shared/domain/paymethods/read.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { parseListQuery } from '#shared/http/list-query.ts';
import { CUSTOMER_LIST_FILTERS, pathOf, paymethodList, paymethodQuery } from '#shared/http/paymethods.ts';
import { readDeps } from '#shared/wiring/paymethods.ts';

const NAME = 'paymethods-list-customer';

/** GET .../locations/{location_id}/customers/{customer_token}/paymethods: resource_specific echoes the path's location and customer too. */
export const handler = apiHandler(NAME, async (request) => {
  const path = request.pathParameters;
  const list = parseListQuery(request.query, { filters: CUSTOMER_LIST_FILTERS });
  const page = await listPaymethods(paymethodQuery({ organizationId: path.organization_id!, locationId: path.location_id, customerToken: path.customer_token }, list.filters), list, readDeps());
  return paymethodList(page, list, {
    baseUrl: request.baseUrl,
    path: pathOf(NAME, path),
    query: request.query,
    homeOrganizationId: request.caller!.organizationId,
    resourceSpecific: { location_id: path.location_id!, customer_token: path.customer_token!, ...list.filters },
  });
});
