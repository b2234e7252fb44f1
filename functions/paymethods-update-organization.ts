import { paymethodUpdateHandler } from '#shared/http/paymethod-update-handler.ts';

/** PUT /v3/organizations/{organization_id}/paymethods/{paymethod_token}: any location, locationless included (contract extension). */
export const handler = paymethodUpdateHandler('paymethods-update-organization');
