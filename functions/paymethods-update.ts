import { updatePaymethod } from '#shared/domain/paymethods/update.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { pathParams } from '#shared/http/request.ts';
import { paymethodLinks, paymethodWriteView } from '#shared/http/paymethods.ts';
import { updated } from '#shared/http/response.ts';
import { updateDeps } from '#shared/wiring/paymethods.ts';

/** PUT .../locations/{location_id}/paymethods/{paymethod_token}: partial update. */
export const handler = apiHandler('paymethods-update', async (request) => {
  const { organization_id: organizationId, location_id: locationId, paymethod_token: paymethodToken } = pathParams(request, 'organization_id', 'location_id', 'paymethod_token');
  const paymethod = await updatePaymethod({ organizationId, locationId, paymethodToken }, request.body ?? {}, updateDeps());
  return updated(paymethodWriteView(paymethod), paymethodLinks(request.baseUrl, paymethod));
});
