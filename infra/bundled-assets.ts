/**
 * Static answers inlined into the functions that serve them, so what a
 * deployment serves is always what its commit's code builds, and the
 * functions build nothing at cold start: the tokenization library is built at
 * synth and inlined with esbuild `define`; the OpenAPI document (too large for
 * a `define`, which esbuild takes as one command-line argument) is the
 * committed docs/openapi.json, imported as JSON, and synth checks it is current.
 */
import { readFileSync } from 'node:fs';
import { openApiDocument, serializeOpenApi } from '#shared/http/openapi.ts';
import type { RouteDefinition } from '#shared/platform/routes.ts';
import { bundleTokenizeScriptSync } from '../client/build.ts';

/** The handler whose bundle carries the built library (read as `__TOKENIZE_SCRIPT__`, see shared/tokenization/script.ts). */
export const TOKENIZE_SCRIPT_HANDLER = 'tokenize-js';
/** The handler whose bundle carries the OpenAPI document (shared/http/openapi-served.ts). */
export const OPENAPI_HANDLER = 'openapi-get';

/** esbuild `define`s (identifier -> JavaScript expression) for a route's function, or undefined when it inlines nothing; checks what it bundles as data. */
export function bundlingDefinesFor(route: RouteDefinition): Record<string, string> | undefined {
  if (route.handler === TOKENIZE_SCRIPT_HANDLER) return { __TOKENIZE_SCRIPT__: JSON.stringify(bundleTokenizeScriptSync()) };
  if (route.handler === OPENAPI_HANDLER) assertCommittedOpenApiIsCurrent();
  return undefined;
}

/**
 * openapi-get bundles the committed docs/openapi.json; a deployment must serve
 * what its code generates, so synth stops on a stale copy.
 */
export function assertCommittedOpenApiIsCurrent(committedFile = new URL('../docs/openapi.json', import.meta.url)): void {
  if (readFileSync(committedFile, 'utf8') !== serializeOpenApi(openApiDocument())) {
    throw new Error('docs/openapi.json is out of date with the route table or the schemas: run `npm run openapi`, then synth again');
  }
}
