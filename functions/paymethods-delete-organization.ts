import { deletePaymethod } from '#shared/domain/paymethods/delete.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { paymethodAddressOf } from '#shared/http/paymethods.ts';
import { deleted } from '#shared/http/response.ts';
import { deleteDeps } from '#shared/wiring/paymethods.ts';

/** DELETE /v3/organizations/{organization_id}/paymethods/{paymethod_token}: any location, locationless included (contract extension). */
export const handler = apiHandler('paymethods-delete-organization', async (request) => deleted(await deletePaymethod(paymethodAddressOf(request), deleteDeps())));
