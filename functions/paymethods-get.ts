import { getPaymethod } from '#shared/domain/paymethods/read.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { pathParams } from '#shared/http/request.ts';
import { paymethodLinks, paymethodReadView } from '#shared/http/paymethods.ts';
import { fetched } from '#shared/http/response.ts';
import { readDeps } from '#shared/wiring/paymethods.ts';

/** GET .../locations/{location_id}/paymethods/{paymethod_token} */
export const handler = apiHandler('paymethods-get', async (request) => {
  const { organization_id: organizationId, location_id: locationId, paymethod_token: paymethodToken } = pathParams(request, 'organization_id', 'location_id', 'paymethod_token');
  const paymethod = await getPaymethod({ organizationId, locationId, paymethodToken }, readDeps());
  return fetched(paymethodReadView(paymethod), paymethodLinks(request.baseUrl, paymethod));
});
