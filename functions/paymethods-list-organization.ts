import { paymethodListHandler } from '#shared/http/paymethod-list-handler.ts';
import { ORGANIZATION_LIST_FILTERS } from '#shared/http/paymethods.ts';

/** GET /v3/organizations/{organization_id}/paymethods, including the Account Updater report (start/end_au_updated_date). */
export const handler = paymethodListHandler('paymethods-list-organization', ORGANIZATION_LIST_FILTERS);
