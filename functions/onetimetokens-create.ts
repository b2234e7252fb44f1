import type { OneTimeToken } from '#shared/domain/paymethods/model.ts';
import { mintOneTimeToken } from '#shared/domain/paymethods/one-time-tokens.ts';
import { idempotentApiHandler } from '#shared/http/idempotency.ts';
import { oneTimeTokenLinks, oneTimeTokenView } from '#shared/http/paymethods.ts';
import { pathParams } from '#shared/http/request.ts';
import { created } from '#shared/http/response.ts';
import { mintDeps } from '#shared/wiring/paymethods.ts';

/** POST .../locations/{location_id}/onetimetokens: a 60-minute, single-use token for a card or echeck. */
export const handler = idempotentApiHandler('onetimetokens-create', async (request, { completion }) => {
  const { organization_id: organizationId, location_id: locationId } = pathParams(request, 'organization_id', 'location_id');
  const answer = (token: OneTimeToken) => created(oneTimeTokenView(token), oneTimeTokenLinks(request.baseUrl, token));
  return answer(await mintOneTimeToken({ organizationId, locationId, body: request.body ?? {}, completion: completion(answer) }, mintDeps()));
});
