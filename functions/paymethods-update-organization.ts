import { updatePaymethod } from '#shared/domain/paymethods/update.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { paymethodAddressOf, paymethodLinks, paymethodWriteView } from '#shared/http/paymethods.ts';
import { updated } from '#shared/http/response.ts';
import { updateDeps } from '#shared/wiring/paymethods.ts';

/** PUT /v3/organizations/{organization_id}/paymethods/{paymethod_token}: partial, any location, locationless included (contract extension). */
export const handler = apiHandler('paymethods-update-organization', async (request) => {
  const paymethod = await updatePaymethod(paymethodAddressOf(request), request.body ?? {}, updateDeps());
  return updated(paymethodWriteView(paymethod), paymethodLinks(request.baseUrl, paymethod));
});
