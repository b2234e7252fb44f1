import { listPaymethods } from '#shared/domain/paymethods/read.ts';
import { readDeps } from '#shared/wiring/paymethods.ts';
import { apiHandler } from './api-handler.ts';
import type { FilterSpec } from './list-query.ts';
import { parseListQuery } from './list-query.ts';
import { pathOf, paymethodList, paymethodQuery } from './paymethods.ts';

/**
 * The three list routes (customer, location, organization) differ in the
 * filters they accept and in what they echo: the customer list echoes its
 * path's location and customer in `resource_specific` as the spec shows.
 */
export function paymethodListHandler(handlerName: string, filters: Readonly<Record<string, FilterSpec>>, options: { echoPathScope?: boolean } = {}) {
  return apiHandler(handlerName, async (request) => {
    const path = request.pathParameters;
    const list = parseListQuery(request.query, { filters });
    const scope = { organizationId: path.organization_id!, locationId: path.location_id, customerToken: path.customer_token };
    const page = await listPaymethods(paymethodQuery(scope, list.filters), list, readDeps());
    return paymethodList(page, list, {
      baseUrl: request.baseUrl,
      path: pathOf(handlerName, path),
      query: request.query,
      homeOrganizationId: request.caller!.organizationId,
      resourceSpecific: options.echoPathScope ? { location_id: path.location_id!, customer_token: path.customer_token!, ...list.filters } : list.filters,
    });
  });
}
