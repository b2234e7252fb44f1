import { paymethodDeleteHandler } from '#shared/http/paymethod-delete-handler.ts';

/** DELETE .../locations/{location_id}/paymethods/{paymethod_token} (contract extension). */
export const handler = paymethodDeleteHandler('paymethods-delete');
