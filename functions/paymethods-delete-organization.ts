import { paymethodDeleteHandler } from '#shared/http/paymethod-delete-handler.ts';

/** DELETE /v3/organizations/{organization_id}/paymethods/{paymethod_token}: any location, locationless included (contract extension). */
export const handler = paymethodDeleteHandler('paymethods-delete-organization');
