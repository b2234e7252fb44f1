import type { APIGatewayProxyEvent } from 'aws-lambda';
import { config } from '#shared/runtime/config.ts';
import { requireOrganizationNamed } from '#shared/domain/credentials.ts';
import { InvalidRequest, NotAuthenticated, NotFound, TooLarge, UnsupportedMediaType } from '#shared/domain/errors.ts';
import type { PublishableScope } from '#shared/domain/publishable-keys.ts';
import type { Caller } from '#shared/domain/tenancy.ts';
import { organizationHeaderValues } from './organization-headers.ts';
import { emptyRecord, isSafeText, mediaTypeOf, parseJsonObject, UNSAFE_TEXT_RULE, unknownQueryParameterIssues } from './hostile-input.ts';
import type { RouteDefinition } from '../platform/routes.ts';
import { pathParameterSpec } from '../platform/routes.ts';

/** What a handler sees of an HTTP request: no API Gateway types past this point. */
export interface ApiRequest {
  readonly requestId: string;
  readonly method: string;
  readonly pathParameters: Readonly<Record<string, string>>;
  /** Every value of every query parameter, decoded. Maps in this request have no prototype: any name is just a name. */
  readonly query: Readonly<Record<string, readonly string[]>>;
  /** Lower-cased names, last value wins (as API Gateway's `headers`). */
  readonly headers: Readonly<Record<string, string>>;
  /** Parsed JSON object for JSON routes (null members removed, hostile shapes refused), undefined otherwise. */
  readonly body: Record<string, unknown> | undefined;
  /**
   * The body's bytes as received, on every route (multipart uploads read them;
   * JSON routes keep them so idempotency can fingerprint the exact request).
   */
  readonly rawBody: Buffer | undefined;
  /** Set on every route that requires credentials (for a publishable key: its organization, and the key as access id). */
  readonly caller: Caller | undefined;
  /** How the caller authenticated, as the authorizer says. */
  readonly credentialKind: 'secret' | 'publishable' | undefined;
  /** Set when credentialKind is `publishable`: what the key is bound to. */
  readonly publishable: PublishableScope | undefined;
  /** Absolute URL of the API's root (scheme, host and stage), without a trailing slash. */
  readonly baseUrl: string;
}

/** What any path parameter may hold after its prefix; anything else is 404. Lengths are per parameter (shared/platform/routes.ts PATH_PARAMETERS). */
export const PATH_SEGMENT_PATTERN = /^[A-Za-z0-9_-]+$/;

export function buildApiRequest(event: APIGatewayProxyEvent, route: RouteDefinition): ApiRequest {
  const headers = lowerCaseHeaders(event.headers);
  const credential = route.auth === 'none' ? undefined : credentialOf(event, headers);
  const rawBody = event.body === null || event.body === undefined ? undefined : Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
  if (route.maxBodyBytes !== undefined && rawBody && rawBody.length > route.maxBodyBytes) {
    throw new TooLarge(`the request body must be at most ${route.maxBodyBytes} bytes`);
  }
  const pathParameters = checkPathParameters(event.pathParameters ?? {});
  return {
    requestId: event.requestContext?.requestId ?? 'unknown',
    method: event.httpMethod,
    pathParameters,
    query: decodeQuery(event),
    headers,
    body: route.binaryBody || !hasJsonBody(event.httpMethod) ? undefined : route.optionalBody && (!rawBody || rawBody.length === 0) ? {} : withoutPathEchoes(parseJsonBody(rawBody, headers), pathParameters),
    rawBody,
    caller: credential?.caller,
    credentialKind: credential?.kind,
    publishable: credential?.publishable,
    baseUrl: baseUrlOf(event, headers),
  };
}

function hasJsonBody(method: string): boolean {
  return method === 'POST' || method === 'PUT' || method === 'PATCH';
}

function lowerCaseHeaders(headers: APIGatewayProxyEvent['headers'] | null): Record<string, string> {
  const result = emptyRecord<string>();
  for (const [name, value] of Object.entries(headers ?? {})) if (value !== undefined) result[name.toLowerCase()] = value;
  return result;
}

/**
 * A segment without its prefix, with characters no id has, or longer than its
 * kind allows does not name a record: 404, on every route alike. A name the
 * route table does not know cannot come from API Gateway; it names nothing either.
 */
function checkPathParameters(parameters: Record<string, string | undefined>): Record<string, string> {
  const checked = emptyRecord<string>();
  for (const [name, value] of Object.entries(parameters)) {
    if (value === undefined || !isPathParameter(name, value)) throw new NotFound(`no ${name.replace(/_/g, ' ')} ${JSON.stringify(value ?? '')}`);
    checked[name] = value;
  }
  return checked;
}

/** Path parameters a body may repeat as members: existing Forte clients send them. */
const ECHOED_PATH_PARAMETERS = ['organization_id', 'location_id', 'customer_token'] as const;

/**
 * A body (or a document upload's JSON part) that repeats a path parameter
 * the path carries, written with its prefix (`loc_123`) or without (`123`):
 * equal to the path's, the member is dropped and changes nothing; different,
 * 400 naming every such member. Members the path does not carry (the
 * locationless create's organization_id, a location create's customer_token)
 * are the body's own and are left as they are.
 */
export function withoutPathEchoes<T>(body: T, pathParameters: Readonly<Record<string, string>>): T {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const members = body as Record<string, unknown>;
  const issues: Array<{ field: string; message: string }> = [];
  let kept: Record<string, unknown> | undefined;
  for (const name of ECHOED_PATH_PARAMETERS) {
    const expected = pathParameters[name];
    // A null member is absent (the contract), and the body's schema treats it so.
    if (expected === undefined || !Object.hasOwn(members, name) || members[name] === null) continue;
    const value = members[name];
    if (value === expected || (typeof value === 'string' && `${pathParameterSpec(name)?.prefix ?? ''}${value}` === expected)) {
      kept ??= { ...members };
      delete kept[name];
    } else {
      issues.push({ field: name, message: `must be the path's ${name}, ${expected}, when the body repeats it (with or without its prefix)` });
    }
  }
  if (issues.length > 0) throw new InvalidRequest(issues);
  return (kept ?? body) as T;
}

/** Whether `value` can be the path parameter `name`: its prefix, at least one character more, within its length. */
export function isPathParameter(name: string, value: string): boolean {
  const spec = pathParameterSpec(name);
  return (
    spec !== undefined &&
    value.startsWith(spec.prefix) &&
    value.length > spec.prefix.length &&
    value.length <= spec.maxLength &&
    PATH_SEGMENT_PATTERN.test(value.slice(spec.prefix.length))
  );
}

function decodeQuery(event: APIGatewayProxyEvent): Record<string, string[]> {
  const query = emptyRecord<string[]>();
  const multi = event.multiValueQueryStringParameters;
  if (multi) {
    for (const [name, values] of Object.entries(multi)) if (values) query[name] = [...values];
  } else {
    for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) if (value !== undefined) query[name] = [value];
  }
  const unsafe = Object.entries(query).filter(([name, values]) => !isSafeText(name) || values.some((value) => !isSafeText(value)));
  if (unsafe.length > 0) {
    throw new InvalidRequest(
      unsafe.map(([name]) => ({ field: isSafeText(name) ? name : '', message: `query parameters must not contain ${UNSAFE_TEXT_RULE}` })),
      'INVALID_QUERY',
    );
  }
  return query;
}

/**
 * The check of a route's query: a route that is not a list takes only the
 * query parameters its table entry names (most take none), each once, and
 * anything else is 400 naming it. A list route's handler checks its own as it
 * parses them (list-query.ts). Built once per function, run per request.
 */
export function queryParameterCheck(route: RouteDefinition): (query: ApiRequest['query']) => void {
  if (route.query === 'list') return () => {};
  const taken: ReadonlySet<string> = new Set(Object.keys(route.query ?? {}));
  return (query) => {
    const issues = unknownQueryParameterIssues(query, taken);
    for (const name of taken) if ((query[name]?.length ?? 0) > 1) issues.push({ field: name, message: 'must be given once' });
    if (issues.length > 0) throw new InvalidRequest(issues, 'INVALID_QUERY');
  };
}

/** The JSON object of a POST, PUT or PATCH, from the bytes buildApiRequest decoded once for every reader. */
function parseJsonBody(bytes: Buffer | undefined, headers: Record<string, string>): Record<string, unknown> {
  if (!bytes || bytes.length === 0) throw new InvalidRequest([{ field: '', message: 'a JSON request body is required' }], 'INVALID_JSON');
  if (mediaTypeOf(headers['content-type']) !== 'application/json') {
    throw new UnsupportedMediaType(`Content-Type must be application/json, not ${JSON.stringify(headers['content-type'] ?? '')}`);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new InvalidRequest([{ field: '', message: 'the request body is not valid UTF-8' }], 'INVALID_JSON');
  }
  return parseJsonObject(text, 'INVALID_JSON');
}

interface Credential {
  kind: 'secret' | 'publishable';
  caller: Caller;
  publishable: PublishableScope | undefined;
}

/**
 * Who the authorizer says is calling; the organization the request names must
 * be theirs. The authorizer's answer is cached on the Authorization header and
 * the address alone (so a client may send either organization header), so this
 * is checked here, on every request.
 */
function credentialOf(event: APIGatewayProxyEvent, headers: Record<string, string>): Credential {
  const context = event.requestContext?.authorizer as Record<string, unknown> | null | undefined;
  const organizationId = context?.organizationId;
  const accessId = context?.accessId;
  const kind = context?.credentialKind;
  // The authorizer always sets these; their absence means the route was wired without it.
  if (typeof organizationId !== 'string' || typeof accessId !== 'string') throw new NotAuthenticated();
  const caller = { organizationId, accessId };
  requireOrganizationNamed(caller, organizationHeaderValues(headers));
  if (kind === 'secret') return { kind, caller, publishable: undefined };
  if (kind !== 'publishable' || typeof context?.locationId !== 'string' || typeof context.allowedOrigins !== 'string') throw new NotAuthenticated();
  return {
    kind,
    caller,
    publishable: {
      publishableKey: accessId,
      organizationId,
      locationId: context.locationId,
      allowedOrigins: context.allowedOrigins.split(' ').filter(Boolean),
      // API Gateway hands context numbers to the integration as strings.
      mintsPerMinute: Number(context.mintsPerMinute),
    },
  };
}

/**
 * Links are absolute and built from the request, so they work behind the
 * execute-api host with its stage, behind a custom domain, and locally.
 */
function baseUrlOf(event: APIGatewayProxyEvent, headers: Record<string, string>): string {
  if (config.publicBaseUrl) return config.publicBaseUrl.replace(/\/+$/, '');
  const host = event.requestContext?.domainName ?? headers.host ?? 'localhost';
  const scheme = headers['x-forwarded-proto']?.split(',')[0]?.trim() || 'https';
  const fullPath = event.requestContext?.path ?? event.path;
  const stagePrefix = fullPath.endsWith(event.path) ? fullPath.slice(0, fullPath.length - event.path.length) : '';
  return `${scheme}://${host}${stagePrefix.replace(/\/+$/, '')}`;
}

/** The named path parameters, all present (the route template guarantees them; absence is a wiring bug). */
export function pathParams<K extends string>(request: Pick<ApiRequest, 'pathParameters'>, ...names: K[]): Record<K, string> {
  const result = {} as Record<K, string>;
  for (const name of names) {
    const value = request.pathParameters[name];
    if (value === undefined) throw new Error(`route has no path parameter ${name}`);
    result[name] = value;
  }
  return result;
}
