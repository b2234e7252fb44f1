/**
 * The OpenAPI document as GET /v3/openapi.json serves it: static JSON text
 * built at bundle time, with `servers` naming the server the request came
 * through. In Lambda the text is inlined into the bundle by esbuild `define`
 * (infra/bundled-assets.ts, generated from the code being deployed), so the
 * function loads neither zod nor the generator and builds nothing at cold
 * start; the local runtime reads docs/openapi.json, which a unit test keeps
 * equal to what the code generates.
 */
import { readFileSync } from 'node:fs';

declare const __OPENAPI_DOCUMENT__: string | undefined;

/** `servers` in the bundled text, replaced per request. */
const SERVERS_SLOT = '"servers":"__SERVERS__"';

/**
 * The document's compact JSON text with `servers` left as a slot (in its
 * place, so members keep their order): what the bundle carries.
 */
export function servableOpenApiText(documentJson: string): string {
  const document = JSON.parse(documentJson) as Record<string, unknown>;
  const text = JSON.stringify({ ...document, servers: '__SERVERS__' });
  if (text.indexOf(SERVERS_SLOT) !== text.lastIndexOf(SERVERS_SLOT)) throw new Error('the OpenAPI document holds the servers slot twice');
  return text;
}

let parts: readonly [string, string] | undefined;

function documentParts(): readonly [string, string] {
  if (!parts) {
    const text =
      typeof __OPENAPI_DOCUMENT__ === 'string' ? __OPENAPI_DOCUMENT__ : servableOpenApiText(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8'));
    const at = text.indexOf(SERVERS_SLOT);
    parts = [text.slice(0, at + '"servers":'.length), text.slice(at + SERVERS_SLOT.length)];
  }
  return parts;
}

/** The document's JSON text naming `baseUrl` (scheme, host and stage, as links use) as its server. */
export function servedOpenApi(baseUrl: string): string {
  const [head, tail] = documentParts();
  return `${head}${JSON.stringify([{ url: baseUrl, description: 'The server this document was requested through.' }])}${tail}`;
}
