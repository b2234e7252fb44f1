import { AccessDenied } from '#shared/domain/errors.ts';
import { isOriginAllowedAtLocation } from '#shared/domain/publishable-keys.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { allowOriginHeaders, PREFLIGHT_ALLOWED_HEADERS, PREFLIGHT_ALLOWED_METHODS, PREFLIGHT_MAX_AGE_SECONDS } from '#shared/http/cors.ts';
import { pathParams } from '#shared/http/request.ts';
import { publishableKeysByLocation } from '#shared/wiring/tokenization.ts';

/**
 * OPTIONS .../locations/{location_id}/onetimetokens: the CORS preflight of browser
 * minting. It cannot carry the key, so it is answered (204 with CORS headers) only
 * for an origin that some publishable key of the path's location allows; any other
 * origin gets a 403 without CORS headers, and the browser never sends the request.
 */
export const handler = apiHandler('onetimetokens-preflight', async (request) => {
  const { organization_id: organizationId, location_id: locationId } = pathParams(request, 'organization_id', 'location_id');
  const origin = await isOriginAllowedAtLocation({ organizationId, locationId, origin: request.headers.origin }, publishableKeysByLocation());
  if (!origin) throw new AccessDenied('this origin may not mint one-time tokens at this location');
  return {
    statusCode: 204,
    headers: {
      ...allowOriginHeaders(origin),
      'Access-Control-Allow-Methods': PREFLIGHT_ALLOWED_METHODS,
      'Access-Control-Allow-Headers': PREFLIGHT_ALLOWED_HEADERS,
      'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_SECONDS),
    },
  };
});
