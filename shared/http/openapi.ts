/**
 * The API as an OpenAPI 3.1 document, generated from the route table
 * (shared/platform/routes.ts) and the schemas the code uses (route-schemas.ts). Pure: no AWS
 * SDK, no I/O, so the openapi-get function builds it at cold start and
 * `npm run openapi` writes the same document to docs/openapi.json.
 *
 * What a route's shape implies is added here, once: security on `secret`
 * routes, path parameters with their prefixes, the list query parameters,
 * Idempotency-Key on POSTs, and the error answers with their response codes
 * (see errorCodes; codes, statuses and meanings come from the catalogue,
 * shared/platform/response-codes.ts). Answer schemas are closed: a member the document
 * does not name fails validation.
 *
 * The document names a templated server (a deployed stack); the one served at
 * GET /v3/openapi.json names the server it was requested through instead
 * (shared/http/openapi-served.ts).
 */
import * as z from 'zod/mini';
import packageJson from '../../package.json' with { type: 'json' };
import { AUTH_REALM, METHOD_NOT_ALLOWED, RETRY_AFTER_SECONDS } from './gateway-responses.ts';
import type { FilterSpec } from './list-query.ts';
import { CURSOR_PATTERN, DEFAULT_PAGE_SIZE, FILTER_PARAMETER, MAX_PAGE_INDEX, MAX_PAGE_SIZE } from './list-query.ts';
import { PATH_SEGMENT_PATTERN } from './request.ts';
import type { ErrorStatus, ResponseCode } from '#shared/platform/response-codes.ts';
import { ALL_RESPONSE_CODES, CODE_DETAILS, statusOf } from '#shared/platform/response-codes.ts';
import type { RequestBody, RouteSchemas, SuccessResponse } from './route-schemas.ts';
import { requestSchemas, responseSchemas, routeSchemas } from './route-schemas.ts';
import type { RouteDefinition } from '../platform/routes.ts';
import { pathParameterSpec, routes as routeTable } from '../platform/routes.ts';

export type JsonObject = { [key: string]: unknown };

export const OPENAPI_VERSION = '3.1.0';
const SCHEMAS = '#/components/schemas/';
const BASIC = 'basicAuth';
const ORGANIZATION_HEADER = 'organizationId';
const PUBLISHABLE = 'publishableKey';

export interface OpenApiSources {
  readonly routes: readonly RouteDefinition[];
  readonly schemas: Readonly<Record<string, RouteSchemas>>;
  readonly requestSchemas: Readonly<Record<string, z.ZodMiniType>>;
  readonly responseSchemas: Readonly<Record<string, z.ZodMiniType>>;
}

const DEFAULT_SOURCES: OpenApiSources = { routes: routeTable, schemas: routeSchemas, requestSchemas, responseSchemas };

/** Route table entries without a route-schemas entry (the generator refuses to run while there are any). */
export function routesWithoutSchemas(sources: Pick<OpenApiSources, 'routes' | 'schemas'> = DEFAULT_SOURCES): string[] {
  return sources.routes.filter((route) => !Object.hasOwn(sources.schemas, route.handler)).map((route) => route.handler);
}

export function openApiDocument(sources: OpenApiSources = DEFAULT_SOURCES): JsonObject {
  const missing = routesWithoutSchemas(sources);
  if (missing.length > 0) {
    throw new Error(`No entry in shared/http/route-schemas.ts for route handler(s) ${missing.join(', ')}: add one, then run npm run openapi`);
  }
  const components = new SchemaComponents(sources);
  const errors = new ErrorResponses();
  const paths: Record<string, JsonObject> = {};
  for (const route of sources.routes) {
    const entry = sources.schemas[route.handler] as RouteSchemas;
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, entry, components, errors);
  }
  // API Gateway answers every other method on a known path from an ANY mock method: 405 with Allow. The
  // extension is how API Gateway itself writes an ANY method; client generators leave it alone.
  for (const item of Object.values(paths)) item[ANY_METHOD] = { responses: { 405: errorResponse(METHOD_NOT_ALLOWED_RESPONSE) } };
  const tags = [...new Set(sources.routes.map(tagOf))].map((name) => ({ name, ...(TAG_DESCRIPTIONS[name] ? { description: TAG_DESCRIPTIONS[name] } : {}) }));
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: 'Payments API: documents and paymethods',
      version: packageJson.version,
      description: INFO_DESCRIPTION,
    },
    servers: COMMITTED_SERVERS,
    tags,
    paths,
    components: {
      schemas: components.all(),
      securitySchemes: {
        [BASIC]: { type: 'http', scheme: 'basic', description: `Authorization: Basic base64(api_access_id:api_secure_key). Realm "${AUTH_REALM}".` },
        [ORGANIZATION_HEADER]: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Service-Auth-Organization-Id',
          description:
            'org_<id>: the organization the credentials belong to. Always sent together with the Basic credentials or the publishable key. ' +
            'X-Forte-Auth-Organization-Id is accepted in its place, with the same rules; sending both with different values is 401.',
        },
        [PUBLISHABLE]: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'pk_…',
          description: 'Authorization: Bearer pk_…, a publishable key for browsers: bound to one organization, location and list of origins, and accepted only where the operation lists it (minting one-time tokens).',
        },
      },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'A repeat with the same key and body within 24 hours returns the first answer (with Idempotent-Replayed: true) without acting again; '
            + 'the same key with another body is 422; a repeat while the first is still running is 409. Keys are scoped to the authenticated organization.',
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        },
        PageSize: {
          name: 'page_size',
          in: 'query',
          required: false,
          description: 'Results per page.',
          schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
        },
        PageIndex: {
          name: 'page_index',
          in: 'query',
          required: false,
          description: 'Zero-based page number. A page past the end is empty.',
          schema: { type: 'integer', minimum: 0, maximum: MAX_PAGE_INDEX, default: 0 },
        },
        Cursor: {
          name: 'cursor',
          in: 'query',
          required: false,
          description: 'Opaque position from links.next; makes reading the next page cost one page of reads. page_index alone works too.',
          schema: { type: 'string', pattern: CURSOR_PATTERN.source },
        },
      },
      headers: {
        'X-Request-Id': { description: 'Identifies the request in the logs; quote it when asking about an answer.', required: true, schema: { type: 'string', minLength: 1 } },
        'Retry-After': { description: 'Seconds to wait before retrying.', required: true, schema: { type: 'string', pattern: '^[0-9]+$', examples: [RETRY_AFTER_SECONDS] } },
        'Idempotent-Replayed': {
          description: 'true when this is the stored answer of an earlier request with the same Idempotency-Key (answers below 500 are stored).',
          schema: { type: 'string', enum: ['true'] },
        },
      },
      responses: errors.all(),
    },
  };
}

/**
 * The servers docs/openapi.json names: a deployed stack (its ApiUrl output
 * without the trailing slash). The document served by a running service names
 * the server it was requested through instead.
 */
export const COMMITTED_SERVERS: readonly JsonObject[] = [
  {
    url: 'https://{apiId}.execute-api.{region}.amazonaws.com/{stage}',
    description:
      "A deployed stack: its ApiUrl output (apiId is the REST API's id, stage the environment's name, for example dev or prod). "
      + 'GET /v3/openapi.json on a running service (locally http://localhost:3000) names the server it was requested through.',
    variables: { apiId: { default: 'abcdef1234' }, region: { default: 'us-east-1' }, stage: { default: 'dev' } },
  },
];

/** docs/openapi.json's text: two-space JSON in the generator's (deterministic) key order, newline-terminated. */
export function serializeOpenApi(document: JsonObject): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

const INFO_DESCRIPTION = [
  'Documents and tokenized paymethods.',
  '',
  'Every route except this document is authenticated with HTTP Basic credentials (api_access_id:api_secure_key) together with',
  'X-Service-Auth-Organization-Id (or X-Forte-Auth-Organization-Id; both with different values is 401); a caller may act on its own organization',
  'and its child organizations.',
  '',
  'Success bodies carry the record\'s members, then `response` (`environment`, `response_desc`) and `links` (absolute URLs).',
  'Every `links.self`, `links.next` and `Location` is answered by a GET of this API; a paymethod\'s `links.transactions`,',
  '`links.settlements` and `links.schedules` name its sub-collections, which other services of the same API serve.',
  'Every error status answers with the ErrorEnvelope: a stable UPPER_SNAKE `response_code` (each answer lists the codes its status',
  'can carry; the catalogue with their meanings is docs/error-codes.md), `response_desc` in the `Error[1]: ... Error[2]: ...` form and',
  '`errors`, listing every failing field. Unknown members in a JSON body are refused (400); members whose value is null are treated as',
  'absent. An unknown path is 404 and a known path with another method is 405 with Allow (declared per path as',
  '`x-amazon-apigateway-any-method`, the ANY method API Gateway answers it from). Every answer carries X-Request-Id.',
].join('\n');

const TAG_DESCRIPTIONS: Readonly<Record<string, string>> = {
  paymethods: 'Card, echeck and PayPal paymethods. Account numbers are never returned.',
  onetimetokens: 'Single-use tokens for a card or echeck, redeemed by a paymethod create.',
  documents: 'Supporting files for applications, disputes and bank accounts.',
  webhooks: 'Endpoints that receive the events, signed, retried and in order per record: docs/webhooks.md.',
  tokenize: 'The client-side tokenization library browsers load.',
  openapi: 'This description of the API.',
};

/** The first word of the handler's name: paymethods-get -> paymethods. */
function tagOf(route: RouteDefinition): string {
  return route.handler.split('-')[0] as string;
}

function operation(route: RouteDefinition, entry: RouteSchemas, components: SchemaComponents, errors: ErrorResponses): JsonObject {
  const parameters = [...pathParameters(route), ...queryParameters(route, entry), ...(route.method === 'POST' ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : [])];
  return {
    operationId: route.handler,
    summary: route.summary,
    description: entry.description ?? `${route.summary}.`,
    tags: [tagOf(route)],
    security: securityOf(route),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(entry.request ? { requestBody: requestBody(route, entry.request, components, entry.examples.request) } : {}),
    responses: { ...successResponse(route, entry, components), ...errorResponses(route, entry, errors) },
    'x-codeSamples': [{ lang: 'Shell', label: 'curl', source: curlSample(route, entry) }],
  };
}

/** Path parameters of the curl samples: the examples' own ids where an answer carries one. */
const SAMPLE_PATH_VALUES: Readonly<Record<string, string>> = {
  organization_id: 'org_demo',
  location_id: 'loc_1001',
  customer_token: 'cst_1001',
  paymethod_token: 'mth_kVkqVgnKkAujZVipF5fYju',
  document_id: 'doc_jURx9tzO5BZhrFWUr1F0Tc',
  one_time_token: 'ott_5E07tg5NBtqf90McJqQ8lA',
};

/**
 * The operation as a curl command, with the README's variables ($BASE, the
 * service's base URL; $AUTH, api_access_id:api_secure_key; $PK, a
 * publishable key) and the example's body.
 */
export function curlSample(route: RouteDefinition, entry: RouteSchemas): string {
  const answer = (entry.examples.response ?? {}) as Record<string, unknown>;
  const path = route.path.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const value = answer[name] ?? (entry.examples.request as Record<string, unknown> | undefined)?.[name] ?? SAMPLE_PATH_VALUES[name];
    return typeof value === 'string' ? value : `${name}_1`;
  });
  const organization = SAMPLE_PATH_VALUES.organization_id;
  const lines = [`curl -s${route.method === 'GET' ? '' : ` -X ${route.method}`} "$BASE${path}"`];
  if (route.auth === 'secret' || route.auth === 'publishable-or-secret') lines.push(`-u "$AUTH" -H "X-Service-Auth-Organization-Id: ${organization}"`);
  if (route.method === 'OPTIONS') lines.push("-H 'Origin: https://shop.example' -H 'Access-Control-Request-Method: POST'");
  if (route.method === 'POST') lines.push('-H "Idempotency-Key: $(uuidgen)"');
  const request = entry.examples.request as Record<string, unknown> | undefined;
  if (entry.request?.kind === 'json' && request) lines.push("-H 'Content-Type: application/json'", `-d '${JSON.stringify(request)}'`);
  if (entry.request?.kind === 'multipart' && request) {
    lines.push(`-F 'metadata=${JSON.stringify(request.metadata)};type=application/json'`, "-F 'file=@receipt.txt;type=text/plain'");
  }
  if (entry.response.status === 302) lines.push('-L -o document.bin');
  return lines.join(' \\\n  ');
}

/** Either alternative satisfies an operation; each needs the organization header too. */
function securityOf(route: RouteDefinition): JsonObject[] {
  const secret = { [BASIC]: [], [ORGANIZATION_HEADER]: [] };
  if (route.auth === 'secret') return [secret];
  if (route.auth === 'publishable-or-secret') return [secret, { [PUBLISHABLE]: [], [ORGANIZATION_HEADER]: [] }];
  return [];
}

function pathParameterNames(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);
}

function pathParameters(route: RouteDefinition): JsonObject[] {
  const rest = PATH_SEGMENT_PATTERN.source.replace(/^\^/, '').replace(/\$$/, '');
  return pathParameterNames(route.path).map((name) => {
    const spec = pathParameterSpec(name);
    if (!spec) throw new Error(`${route.handler}: path parameter ${name} has no entry in PATH_PARAMETERS`);
    const { prefix, maxLength } = spec;
    return {
      name,
      in: 'path',
      required: true,
      description: `${prefix} followed by letters, digits, _ or -, at most ${maxLength} characters in all. Any other value names nothing: 404.`,
      schema: { type: 'string', pattern: `^${prefix}${rest}$`, maxLength },
      example: `${prefix}1a2b3c`,
    };
  });
}

const DATE_PATTERN = '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}:\\d{2})?$';

function queryParameters(route: RouteDefinition, entry: RouteSchemas): JsonObject[] {
  if (route.query !== undefined && route.query !== 'list') {
    return Object.entries(route.query).map(([name, description]) => ({ name, in: 'query', required: false, description, schema: { type: 'string' } }));
  }
  if (!entry.listFilters) return [];
  const filters = Object.entries(entry.listFilters);
  const filter = {
    name: FILTER_PARAMETER,
    in: 'query',
    required: false,
    description:
      `Filters as one expression: \`<name> eq '<value>'\` terms joined by \`and\` (keywords in any case; a quote inside a value is doubled; `
      + `a value without spaces or quotes may be unquoted). Names: ${filters.map(([name]) => name).join(', ')}. `
      + 'Each filter may also be given as its own query parameter, but not both ways at once. Unknown or repeated names are 400.',
    schema: { type: 'string' },
    example: filterExample(filters),
  };
  return [
    ...filters.map(([name, spec]) => ({ name, in: 'query', required: false, ...filterParameter(spec) })),
    filter,
    { $ref: '#/components/parameters/PageSize' },
    { $ref: '#/components/parameters/PageIndex' },
    { $ref: '#/components/parameters/Cursor' },
  ];
}

function filterExample(filters: ReadonlyArray<[string, FilterSpec]>): string {
  const [name, spec] = filters.find(([, candidate]) => candidate.kind === 'date' && candidate.bound === 'start') ?? filters[0] ?? ['', undefined];
  return spec ? `${name} eq '${filterParameter(spec).example}'` : '';
}

function filterParameter(spec: FilterSpec): { description: string; schema: JsonObject; example: string } {
  switch (spec.kind) {
    case 'enum':
      return { description: 'Matched in any case.', schema: { type: 'string', enum: [...spec.values] }, example: spec.values[0] as string };
    case 'date':
      return {
        description: `yyyy-mm-dd or yyyy-mm-ddThh:mm:ss (UTC); a date alone means ${spec.bound === 'start' ? '00:00:00' : '23:59:59'} of that day.`,
        schema: { type: 'string', pattern: DATE_PATTERN },
        example: spec.bound === 'start' ? '2024-01-01' : '2024-01-31',
      };
    case 'string':
      return {
        description: spec.description ? `Exact match: ${spec.description}.` : 'Exact match.',
        schema: { type: 'string', minLength: 1, ...(spec.maxLength !== undefined ? { maxLength: spec.maxLength } : {}), ...(spec.pattern ? { pattern: spec.pattern.source } : {}) },
        example: spec.example ?? 'example',
      };
  }
}

function requestBody(route: RouteDefinition, request: RequestBody, components: SchemaComponents, example: unknown): JsonObject {
  const examples = example === undefined ? {} : { example };
  if (request.kind === 'json') {
    return { required: route.optionalBody !== true, content: { 'application/json': { schema: components.request(request.schema, route), ...examples } } };
  }
  return {
    required: true,
    content: {
      'multipart/form-data': {
        schema: {
          type: 'object',
          required: ['metadata', 'file'],
          properties: {
            metadata: { ...components.request(request.metadata, route), description: 'The first part: JSON (its part name is free).' },
            file: {
              type: 'string',
              format: 'binary',
              contentMediaType: 'application/octet-stream',
              description: `The second part, named file, with a filename (at most 255 characters once any path is removed); 1 to ${request.maxFileBytes} bytes.`,
            },
          },
        },
        encoding: {
          metadata: { contentType: 'application/json' },
          file: { contentType: request.fileContentTypes.join(', ') },
        },
        ...examples,
      },
    },
  };
}

function header(description: string, example?: string, required = false): JsonObject {
  return { description, ...(required ? { required: true } : {}), schema: { type: 'string', ...(example !== undefined ? { examples: [example] } : {}) } };
}

const HEADERS = '#/components/headers/';
const RESPONSES = '#/components/responses/';
const ANY_METHOD = 'x-amazon-apigateway-any-method';
const REQUEST_ID = { 'X-Request-Id': { $ref: `${HEADERS}X-Request-Id` } };
const REPLAYED = { 'Idempotent-Replayed': { $ref: `${HEADERS}Idempotent-Replayed` } };

function successResponse(route: RouteDefinition, entry: RouteSchemas, components: SchemaComponents): JsonObject {
  const response: SuccessResponse = entry.response;
  const headers: JsonObject = { ...REQUEST_ID };
  if (response.status === 201) headers.Location = header('URL of the new record.', undefined, true);
  if (route.method === 'POST') Object.assign(headers, REPLAYED);
  for (const [name, { description, example }] of Object.entries(response.headers ?? {})) headers[name] = header(description, example, name === 'Location' || name === 'ETag');
  const answers: JsonObject = {
    [response.status]: {
      description: response.description,
      headers,
      ...(response.schema
        ? { content: { 'application/json': { schema: components.response(response.schema, route), ...(entry.examples.response === undefined ? {} : { example: entry.examples.response }) } } }
        : {}),
      ...(response.text ? { content: { [response.text.mediaType]: { schema: { type: 'string', description: response.text.description } } } } : {}),
    },
  };
  if (entry.notModified) answers[304] = { description: entry.notModified, headers };
  return answers;
}

/**
 * The codes a route can answer with, from its shape: what every route can get
 * (from API Gateway or the shared middleware: a bad query string, oversized
 * headers or body, throttling, a failure, a dependency down), a JSON or
 * multipart body, list filters, POST idempotency, credentials, path parameters,
 * and a write whose outcome can be unknown; plus the entry's own.
 */
export function errorCodes(route: RouteDefinition, entry: RouteSchemas): Map<ErrorStatus, ResponseCode[]> {
  const codes = new Set<ResponseCode>(['INVALID_QUERY', 'INVALID_REQUEST', 'HEADERS_TOO_LARGE', 'PAYLOAD_TOO_LARGE', 'THROTTLED', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE']);
  const add = (...more: ResponseCode[]) => more.forEach((code) => codes.add(code));
  if (entry.request?.kind === 'json') add('VALIDATION_ERROR', 'INVALID_JSON', 'UNSUPPORTED_MEDIA_TYPE');
  if (entry.request?.kind === 'multipart') add('VALIDATION_ERROR', 'INVALID_MULTIPART', 'UNSUPPORTED_MEDIA_TYPE', 'FILE_TOO_LARGE');
  if (entry.listFilters) add('INVALID_CURSOR');
  if (route.method === 'POST') add('INVALID_IDEMPOTENCY_KEY', 'IDEMPOTENCY_KEY_IN_USE', 'IDEMPOTENCY_KEY_REUSED');
  if (route.auth !== 'none') add('UNAUTHORIZED', 'FORBIDDEN');
  if (pathParameterNames(route.path).length > 0) add('NOT_FOUND');
  if (route.access.table === 'write' || route.access.webhookDeliveries?.writes?.length) add('OUTCOME_UNKNOWN');
  add(...(entry.errors ?? []));
  const byStatus = new Map<ErrorStatus, ResponseCode[]>();
  for (const code of ALL_RESPONSE_CODES) {
    if (codes.has(code)) byStatus.set(statusOf(code), [...(byStatus.get(statusOf(code)) ?? []), code]);
  }
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}

/** Headers an error answer of this status carries beyond X-Request-Id. */
function errorHeaders(status: ErrorStatus): JsonObject {
  if (status === 401) return { 'WWW-Authenticate': header('The Basic scheme and its realm.', `Basic realm="${AUTH_REALM}"`, true) };
  if (status === 405) return { Allow: header('The methods the path takes.', 'GET, POST', true) };
  if (status === 429 || status === 503) return { 'Retry-After': { $ref: `${HEADERS}Retry-After` } };
  return {};
}

const REASONS: Readonly<Record<ErrorStatus, string>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  422: 'UnprocessableContent',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
};

interface ErrorAnswer {
  readonly status: ErrorStatus;
  readonly codes: readonly ResponseCode[];
  /** A stored answer of an idempotent POST may be replayed (statuses below 500). */
  readonly replayable: boolean;
}

const METHOD_NOT_ALLOWED_RESPONSE: ErrorAnswer = { status: 405, codes: [METHOD_NOT_ALLOWED.code], replayable: false };

/**
 * Error answers as components.responses, one per distinct status, code list
 * and headers, so operations refer to them: `BadRequest`, `BadRequest2`, ...
 * in the order the route table first needs them.
 */
class ErrorResponses {
  private readonly names = new Map<string, string>();
  private readonly variants = new Map<string, number>();
  private readonly responses: Record<string, JsonObject> = {};

  named(answer: ErrorAnswer): string {
    const key = JSON.stringify(answer);
    let name = this.names.get(key);
    if (name === undefined) {
      const base = `${REASONS[answer.status]}${answer.replayable ? 'OnPost' : ''}`;
      const variant = (this.variants.get(base) ?? 0) + 1;
      this.variants.set(base, variant);
      name = variant === 1 ? base : `${base}${variant}`;
      this.names.set(key, name);
      this.responses[name] = errorResponse(answer);
    }
    return name;
  }

  all(): JsonObject {
    return this.responses;
  }
}

function errorResponse({ status, codes, replayable }: ErrorAnswer): JsonObject {
  return {
    description: codes.map((code) => `\`${code}\`: ${CODE_DETAILS[code].meaning}`).join('\n\n'),
    headers: { ...REQUEST_ID, ...errorHeaders(status), ...(replayable ? REPLAYED : {}) },
    content: {
      'application/json': {
        schema: {
          allOf: [{ $ref: `${SCHEMAS}ErrorEnvelope` }],
          properties: { response: { properties: { response_code: { enum: [...codes] } } } },
        },
      },
    },
  };
}

function errorResponses(route: RouteDefinition, entry: RouteSchemas, errors: ErrorResponses): JsonObject {
  const responses: JsonObject = {};
  for (const [status, codes] of errorCodes(route, entry)) {
    responses[status] = { $ref: `${RESPONSES}${errors.named({ status, codes, replayable: route.method === 'POST' && status < 500 })}` };
  }
  return responses;
}

/**
 * Named zod schemas -> components.schemas, through z.toJSONSchema (request
 * bodies as input, answers as output). A schema an entry uses without a name
 * is named after its route. Both are closed (additionalProperties: false):
 * the service refuses unknown members in a request, and an answer carrying a
 * member the document does not name (an account number, say) is a defect that
 * validation against the document must catch.
 */
class SchemaComponents {
  private readonly requests = new Map<z.ZodMiniType, string>();
  private readonly responses = new Map<z.ZodMiniType, string>();

  constructor(sources: OpenApiSources) {
    for (const [name, schema] of Object.entries(sources.requestSchemas)) this.requests.set(schema, name);
    for (const [name, schema] of Object.entries(sources.responseSchemas)) this.responses.set(schema, name);
  }

  request(schema: z.ZodMiniType, route: RouteDefinition): JsonObject {
    return { $ref: `${SCHEMAS}${this.nameOf(this.requests, schema, `${pascalCase(route.handler)}Request`)}` };
  }

  response(schema: z.ZodMiniType, route: RouteDefinition): JsonObject {
    return { $ref: `${SCHEMAS}${this.nameOf(this.responses, schema, `${pascalCase(route.handler)}Response`)}` };
  }

  all(): JsonObject {
    const requests = generate(this.requests, 'input');
    const responses = generate(this.responses, 'output');
    const clash = Object.keys(requests).filter((name) => Object.hasOwn(responses, name));
    if (clash.length > 0) throw new Error(`Schema component names used for both a request and a response: ${clash.join(', ')}`);
    return { ...requests, ...responses };
  }

  private nameOf(names: Map<z.ZodMiniType, string>, schema: z.ZodMiniType, fallback: string): string {
    if (!names.has(schema)) names.set(schema, fallback);
    return names.get(schema) as string;
  }
}

function generate(names: ReadonlyMap<z.ZodMiniType, string>, io: 'input' | 'output'): Record<string, JsonObject> {
  const registry = z.registry<{ id: string }>();
  for (const [schema, id] of names) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    io,
    target: 'draft-2020-12',
    unrepresentable: 'throw',
    uri: (id) => `${SCHEMAS}${id}`,
    override: ({ jsonSchema }) => {
      const node = jsonSchema as JsonObject;
      // Noise: zod's integer() bounds are the safe-integer range.
      if (node.minimum === Number.MIN_SAFE_INTEGER) delete node.minimum;
      if (node.maximum === Number.MAX_SAFE_INTEGER) delete node.maximum;
    },
  });
  // components.schemas entries are plain schemas under the document's dialect (2020-12, OpenAPI's default).
  const result: Record<string, JsonObject> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _dialect, $id: _id, ...rest } = schema as JsonObject;
    result[id] = rest;
  }
  return result;
}

function pascalCase(kebab: string): string {
  return kebab.replace(/(^|-)([a-z0-9])/g, (_match, _dash: string, char: string) => char.toUpperCase());
}
