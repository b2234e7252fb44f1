import { publicApiHandler } from '#shared/http/public-api-handler.ts';
import { servedOpenApi } from '#shared/http/openapi-served.ts';

/**
 * GET /v3/openapi.json: public, cacheable (it changes only with a deployment).
 * Static text built at bundle time; `servers` names the server the request came through.
 */
export const handler = publicApiHandler('openapi-get', async (request) => ({
  statusCode: 200,
  headers: { 'Cache-Control': 'public, max-age=300', 'Content-Type': 'application/json' },
  text: servedOpenApi(request.baseUrl),
}));
