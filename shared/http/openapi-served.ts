/**
 * The OpenAPI document as GET /v3/openapi.json serves it: the committed
 * docs/openapi.json, bundled into the function as data (a JSON import, so
 * the function loads neither zod nor the generator), with `servers` naming
 * the server the request came through. The committed file is what the code
 * generates: a unit test says so, and synth refuses to bundle a stale one
 * (infra/bundled-assets.ts). Not an esbuild `define`: the document is larger
 * than one command-line argument may be.
 */
import committedDocument from '../../docs/openapi.json' with { type: 'json' };

/** `servers` in the bundled text, replaced per request. */
const SERVERS_SLOT = '"servers":"__SERVERS__"';

/**
 * The document's compact JSON text with `servers` left as a slot (in its
 * place, so members keep their order), built once per container.
 */
export function servableOpenApiText(document: object): string {
  const text = JSON.stringify({ ...document, servers: '__SERVERS__' });
  if (text.indexOf(SERVERS_SLOT) !== text.lastIndexOf(SERVERS_SLOT)) throw new Error('the OpenAPI document holds the servers slot twice');
  return text;
}

let parts: readonly [string, string] | undefined;

function documentParts(): readonly [string, string] {
  if (!parts) {
    const text = servableOpenApiText(committedDocument);
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
