import { paymethodCreateHandler } from '#shared/http/paymethod-create-handler.ts';

/** POST .../locations/{location_id}/customers/{customer_token}/paymethods */
export const handler = paymethodCreateHandler('paymethods-create-customer', 'customer');
