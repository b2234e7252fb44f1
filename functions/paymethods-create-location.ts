import { paymethodCreateHandler } from '#shared/http/paymethod-create-handler.ts';

/** POST .../locations/{location_id}/paymethods: clientless, or attached to the body's customer_token */
export const handler = paymethodCreateHandler('paymethods-create-location', 'location');
