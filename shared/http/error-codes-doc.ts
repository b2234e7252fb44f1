/**
 * docs/error-codes.md, generated from the catalogue (shared/platform/response-codes.ts)
 * and the routes that can answer each code (errorCodes in openapi.ts), by
 * `npm run openapi`. A unit test fails while the committed file differs.
 */
import type { CodeSurface, ResponseCode } from '#shared/platform/response-codes.ts';
import { ALL_RESPONSE_CODES, CODE_DETAILS, KIND_OF_CODE, statusOf } from '#shared/platform/response-codes.ts';
import { errorCodes } from './openapi.ts';
import type { RouteSchemas } from './route-schemas.ts';
import { routeSchemas } from './route-schemas.ts';
import type { RouteDefinition } from '../platform/routes.ts';
import { routes as routeTable } from '../platform/routes.ts';

/** Which operations (by handler name) can answer each code. */
function answeredBy(routes: readonly RouteDefinition[], schemas: Readonly<Record<string, RouteSchemas>>): Map<ResponseCode, string[]> {
  const byCode = new Map<ResponseCode, string[]>();
  for (const route of routes) {
    for (const codes of errorCodes(route, schemas[route.handler] as RouteSchemas).values()) {
      for (const code of codes) byCode.set(code, [...(byCode.get(code) ?? []), route.handler]);
    }
  }
  return byCode;
}

function where(code: ResponseCode, handlers: readonly string[], routes: readonly RouteDefinition[]): string {
  if (code === 'METHOD_NOT_ALLOWED') return 'every path, for a method it does not take';
  const named = (list: readonly string[]) => list.map((handler) => `\`${handler}\``).join(', ');
  const missing = routes.map((route) => route.handler).filter((handler) => !handlers.includes(handler));
  if (missing.length === 0) return 'every route';
  if (missing.length <= 4) return `every route but ${named(missing)}`;
  const posts = routes.filter((route) => route.method === 'POST').map((route) => route.handler);
  if (handlers.length === posts.length && posts.every((handler) => handlers.includes(handler))) return 'every POST';
  return named(handlers);
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

export function errorCodesMarkdown(routes: readonly RouteDefinition[] = routeTable, schemas: Readonly<Record<string, RouteSchemas>> = routeSchemas): string {
  const byCode = answeredBy(routes, schemas);
  const of = (surface: CodeSurface) => ALL_RESPONSE_CODES.filter((code) => CODE_DETAILS[code].surface === surface);
  const lines = [
    '# Error codes',
    '',
    '<!-- Generated from shared/platform/response-codes.ts by `npm run openapi`: edit the catalogue, not this file (a unit test fails while the two differ). -->',
    '',
    'Every error answer carries the error envelope (`response.response_code`, `response.response_desc`, `response.errors`) and',
    '`X-Request-Id`. `response_code` is one of the codes below; a code always comes with the same status. The OpenAPI document',
    '(`docs/openapi.json`, served at `GET /v3/openapi.json`) lists, for each operation and status, the codes it can carry.',
    '',
    '## HTTP answers',
    '',
    '| `response_code` | Status | Kind | Meaning | Answered by |',
    '|---|---|---|---|---|',
    ...of('api').map((code) => `| \`${code}\` | ${statusOf(code)} | ${KIND_OF_CODE[code]} | ${cell(CODE_DETAILS[code].meaning)} | ${where(code, byCode.get(code) ?? [], routes)} |`),
    '',
    '## Command-line tools',
    '',
    'The CLIs (`npm run admin`, `au:apply`, `au:export`) print failures as `{"error": CODE, "message": ..., "errors": [...]}` on stderr',
    'with a non-zero exit code. Besides the HTTP codes above (`VALIDATION_ERROR`, `NOT_FOUND`, ...), they use:',
    '',
    '| Code | Kind | Meaning |',
    '|---|---|---|',
    ...of('cli').map((code) => `| \`${code}\` | ${KIND_OF_CODE[code]} | ${cell(CODE_DETAILS[code].meaning)} |`),
    '',
    '## Account Updater files refused as a whole',
    '',
    'Written as `error` in the run\'s summary (`au-results/...json`) and printed by `au:apply`; nothing of the file is applied',
    '(see [account-updater.md](account-updater.md)).',
    '',
    '| Code | Meaning |',
    '|---|---|',
    ...of('account-updater').map((code) => `| \`${code}\` | ${cell(CODE_DETAILS[code].meaning)} |`),
    '',
  ];
  return lines.join('\n');
}
