import { getOneTimeToken } from '#shared/domain/paymethods/read.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { pathParams } from '#shared/http/request.ts';
import { oneTimeTokenLinks, oneTimeTokenView } from '#shared/http/paymethods.ts';
import { fetched } from '#shared/http/response.ts';
import { oneTimeTokenReadDeps } from '#shared/wiring/paymethods.ts';

/** GET .../locations/{location_id}/onetimetokens/{one_time_token}: the address a mint answers with; 404 once used or expired. */
export const handler = apiHandler('onetimetokens-get', async (request) => {
  const { organization_id: organizationId, location_id: locationId, one_time_token: oneTimeToken } = pathParams(request, 'organization_id', 'location_id', 'one_time_token');
  const token = await getOneTimeToken({ organizationId, locationId, oneTimeToken }, oneTimeTokenReadDeps());
  return fetched(oneTimeTokenView(token), oneTimeTokenLinks(request.baseUrl, token));
});
