/**
 * Static answers built at synth time and inlined into the functions that serve
 * them (esbuild `define`), so what a deployment serves is always what its
 * commit's code builds, and the functions build nothing at cold start.
 */
import { openApiDocument, serializeOpenApi } from '#shared/http/openapi.ts';
import { servableOpenApiText } from '#shared/http/openapi-served.ts';
import type { RouteDefinition } from '#shared/http/routes.ts';
import { bundleTokenizeScriptSync } from '../client/build.ts';

/** The handler whose bundle carries the built library (read as `__TOKENIZE_SCRIPT__`, see shared/tokenization/script.ts). */
export const TOKENIZE_SCRIPT_HANDLER = 'tokenize-js';
/** The handler whose bundle carries the OpenAPI document (read as `__OPENAPI_DOCUMENT__`, see shared/http/openapi-served.ts). */
export const OPENAPI_HANDLER = 'openapi-get';

/** esbuild `define`s (identifier -> JavaScript expression) for a route's function, or undefined when it inlines nothing. */
export function bundlingDefinesFor(route: RouteDefinition): Record<string, string> | undefined {
  if (route.handler === TOKENIZE_SCRIPT_HANDLER) return { __TOKENIZE_SCRIPT__: JSON.stringify(bundleTokenizeScriptSync()) };
  if (route.handler === OPENAPI_HANDLER) return { __OPENAPI_DOCUMENT__: JSON.stringify(servableOpenApiText(serializeOpenApi(openApiDocument()))) };
  return undefined;
}
