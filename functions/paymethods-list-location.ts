import { listPaymethods } from '#shared/domain/paymethods/read.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { parseListQuery } from '#shared/http/list-query.ts';
import { LOCATION_LIST_FILTERS, paymethodList, paymethodQuery } from '#shared/http/paymethods.ts';
import { readDeps } from '#shared/wiring/paymethods.ts';

const NAME = 'paymethods-list-location';

/** GET .../locations/{location_id}/paymethods */
export const handler = apiHandler(NAME, async (request) => {
  const list = parseListQuery(request.query, { filters: LOCATION_LIST_FILTERS });
  const page = await listPaymethods(paymethodQuery(request.pathParameters, list.filters), list, readDeps());
  return paymethodList(page, list, request, { routeName: NAME, resourceSpecific: list.filters });
});
