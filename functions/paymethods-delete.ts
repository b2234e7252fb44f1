import { deletePaymethod } from '#shared/domain/paymethods/delete.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { pathParams } from '#shared/http/request.ts';
import { deleted } from '#shared/http/response.ts';
import { readDeps } from '#shared/wiring/paymethods.ts';

/** DELETE .../locations/{location_id}/paymethods/{paymethod_token} (contract extension). */
export const handler = apiHandler('paymethods-delete', async (request) => {
  const { organization_id: organizationId, location_id: locationId, paymethod_token: paymethodToken } = pathParams(request, 'organization_id', 'location_id', 'paymethod_token');
  return deleted(await deletePaymethod({ organizationId, locationId, paymethodToken }, readDeps()));
});
