import { publicApiHandler } from '#shared/http/public-api-handler.ts';
import { SCRIPT_MAX_AGE_SECONDS, tokenizeScript, VERSIONED_SCRIPT_MAX_AGE_SECONDS } from '#shared/tokenization/script.ts';

/**
 * GET /v3/js/tokenize.js: the tokenization library, an ES module. `?v=<version>`
 * (the content hash the demo page and integrators pin) is cached for a year;
 * the bare URL for five minutes, then revalidated with If-None-Match (304).
 * Public static code: `Access-Control-Allow-Origin: *` lets checkout pages on
 * any origin import it as a module; it carries no data and no credentials.
 */
export const handler = publicApiHandler('tokenize-js', async (request) => {
  const script = tokenizeScript();
  const pinned = request.query.v?.[0] === script.version;
  const headers = {
    'Cache-Control': pinned ? `public, max-age=${VERSIONED_SCRIPT_MAX_AGE_SECONDS}, immutable` : `public, max-age=${SCRIPT_MAX_AGE_SECONDS}`,
    ETag: script.etag,
    'Access-Control-Allow-Origin': '*',
    'Cross-Origin-Resource-Policy': 'cross-origin',
    'X-Content-Type-Options': 'nosniff',
  };
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifNoneMatch?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === script.etag)) return { statusCode: 304, headers, text: '' };
  return { statusCode: 200, headers: { ...headers, 'Content-Type': 'text/javascript; charset=utf-8' }, text: script.body };
});
