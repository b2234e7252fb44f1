import { deletePaymethod } from '#shared/domain/paymethods/delete.ts';
import { deleteDeps } from '#shared/wiring/paymethods.ts';
import { apiHandler } from './api-handler.ts';
import { paymethodAddressOf } from './paymethods.ts';
import { deleted } from './response.ts';

/** DELETE of a paymethod and its ciphertext, at either of its paths (paymethodAddressOf). */
export function paymethodDeleteHandler(handlerName: 'paymethods-delete' | 'paymethods-delete-organization') {
  return apiHandler(handlerName, async (request) => deleted(await deletePaymethod(paymethodAddressOf(request), deleteDeps())));
}
