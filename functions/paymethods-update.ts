import { paymethodUpdateHandler } from '#shared/http/paymethod-update-handler.ts';

/** PUT .../locations/{location_id}/paymethods/{paymethod_token}: partial update. */
export const handler = paymethodUpdateHandler('paymethods-update');
