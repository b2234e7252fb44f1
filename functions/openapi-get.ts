import { publicApiHandler } from '#shared/http/public-api-handler.ts';
import { openApiDocument } from '#shared/http/openapi.ts';

/** Built once per cold start from the route table and the schemas the code uses: what this deployment serves. */
const document = openApiDocument();

/** GET /v3/openapi.json: public, cacheable (it changes only with a deployment). */
export const handler = publicApiHandler('openapi-get', async () => ({
  statusCode: 200,
  headers: { 'Cache-Control': 'public, max-age=300' },
  body: document,
}));
