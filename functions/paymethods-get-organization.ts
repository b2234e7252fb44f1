import { getPaymethod } from '#shared/domain/paymethods/read.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { pathParams } from '#shared/http/request.ts';
import { paymethodLinks, paymethodReadView } from '#shared/http/paymethods.ts';
import { fetched } from '#shared/http/response.ts';
import { readDeps } from '#shared/wiring/paymethods.ts';

/** GET /v3/organizations/{organization_id}/paymethods/{paymethod_token}: any location, locationless included. */
export const handler = apiHandler('paymethods-get-organization', async (request) => {
  const { organization_id: organizationId, paymethod_token: paymethodToken } = pathParams(request, 'organization_id', 'paymethod_token');
  const paymethod = await getPaymethod({ organizationId, paymethodToken }, readDeps());
  return fetched(paymethodReadView(paymethod), paymethodLinks(request.baseUrl, paymethod));
});
