import { listPaymethods } from '#shared/domain/paymethods/read.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { parseListQuery } from '#shared/http/list-query.ts';
import { CUSTOMER_LIST_FILTERS, paymethodList, paymethodQuery } from '#shared/http/paymethods.ts';
import { pathParams } from '#shared/http/request.ts';
import { readDeps } from '#shared/wiring/paymethods.ts';

const NAME = 'paymethods-list-customer';

/** GET .../locations/{location_id}/customers/{customer_token}/paymethods: resource_specific echoes the path's location and customer too, as the spec shows. */
export const handler = apiHandler(NAME, async (request) => {
  const list = parseListQuery(request.query, { filters: CUSTOMER_LIST_FILTERS });
  const page = await listPaymethods(paymethodQuery(request.pathParameters, list.filters), list, readDeps());
  const { location_id, customer_token } = pathParams(request, 'location_id', 'customer_token');
  return paymethodList(page, list, request, { routeName: NAME, resourceSpecific: { location_id, customer_token, ...list.filters } });
});
