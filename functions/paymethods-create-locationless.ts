import { paymethodCreateHandler } from '#shared/http/paymethod-create-handler.ts';

/** POST /v3/customers/{customer_token}/paymethods (organization_id in the body) */
export const handler = paymethodCreateHandler('paymethods-create-locationless', 'locationless');
