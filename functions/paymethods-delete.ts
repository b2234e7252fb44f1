import { deletePaymethod } from '#shared/domain/paymethods/delete.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { paymethodAddressOf } from '#shared/http/paymethods.ts';
import { deleted } from '#shared/http/response.ts';
import { deleteDeps } from '#shared/wiring/paymethods.ts';

/** DELETE .../locations/{location_id}/paymethods/{paymethod_token}: the record and its ciphertext (contract extension). */
export const handler = apiHandler('paymethods-delete', async (request) => deleted(await deletePaymethod(paymethodAddressOf(request), deleteDeps())));
