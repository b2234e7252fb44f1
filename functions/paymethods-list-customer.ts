import { paymethodListHandler } from '#shared/http/paymethod-list-handler.ts';
import { CUSTOMER_LIST_FILTERS } from '#shared/http/paymethods.ts';

/** GET .../locations/{location_id}/customers/{customer_token}/paymethods: resource_specific echoes the path's location and customer too. */
export const handler = paymethodListHandler('paymethods-list-customer', CUSTOMER_LIST_FILTERS, { echoPathScope: true });
