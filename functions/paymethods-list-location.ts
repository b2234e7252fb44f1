import { listPaymethods } from '#shared/domain/paymethods/read.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { parseListQuery } from '#shared/http/list-query.ts';
import { LOCATION_LIST_FILTERS, pathOf, paymethodList, paymethodQuery } from '#shared/http/paymethods.ts';
import { readDeps } from '#shared/wiring/paymethods.ts';

const NAME = 'paymethods-list-location';

/** GET .../locations/{location_id}/paymethods */
export const handler = apiHandler(NAME, async (request) => {
  const path = request.pathParameters;
  const list = parseListQuery(request.query, { filters: LOCATION_LIST_FILTERS });
  const page = await listPaymethods(paymethodQuery({ organizationId: path.organization_id!, locationId: path.location_id }, list.filters), list, readDeps());
  return paymethodList(page, list, {
    baseUrl: request.baseUrl,
    path: pathOf(NAME, path),
    query: request.query,
    homeOrganizationId: request.caller!.organizationId,
    resourceSpecific: list.filters,
  });
});
