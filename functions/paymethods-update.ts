import { updatePaymethod } from '#shared/domain/paymethods/update.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { paymethodAddressOf, paymethodLinks, paymethodWriteView } from '#shared/http/paymethods.ts';
import { updated } from '#shared/http/response.ts';
import { updateDeps } from '#shared/wiring/paymethods.ts';

/** PUT .../locations/{location_id}/paymethods/{paymethod_token}: partial update. */
export const handler = apiHandler('paymethods-update', async (request) => {
  const paymethod = await updatePaymethod(paymethodAddressOf(request), request.body ?? {}, updateDeps());
  return updated(paymethodWriteView(paymethod), paymethodLinks(request.baseUrl, paymethod));
});
