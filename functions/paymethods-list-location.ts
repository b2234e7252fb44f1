import { paymethodListHandler } from '#shared/http/paymethod-list-handler.ts';
import { LOCATION_LIST_FILTERS } from '#shared/http/paymethods.ts';

/** GET .../locations/{location_id}/paymethods */
export const handler = paymethodListHandler('paymethods-list-location', LOCATION_LIST_FILTERS);
