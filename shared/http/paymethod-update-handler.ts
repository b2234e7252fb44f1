import { updatePaymethod } from '#shared/domain/paymethods/update.ts';
import { updateDeps } from '#shared/wiring/paymethods.ts';
import { apiHandler } from './api-handler.ts';
import { paymethodAddressOf, paymethodLinks, paymethodWriteView } from './paymethods.ts';
import { updated } from './response.ts';

/** PUT of a paymethod, partial, at either of its paths (paymethodAddressOf). */
export function paymethodUpdateHandler(handlerName: 'paymethods-update' | 'paymethods-update-organization') {
  return apiHandler(handlerName, async (request) => {
    const paymethod = await updatePaymethod(paymethodAddressOf(request), request.body ?? {}, updateDeps());
    return updated(paymethodWriteView(paymethod), paymethodLinks(request.baseUrl, paymethod));
  });
}
