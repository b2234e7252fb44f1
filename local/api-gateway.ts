import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  Context,
} from 'aws-lambda';
import type { FunctionSizing } from '#shared/platform/function-sizing.ts';
import { API_FUNCTION_SIZING } from '#shared/platform/function-sizing.ts';
import { errorEnvelope } from '#shared/http/envelope.ts';
import type { GatewayResponseKind } from '#shared/http/gateway-responses.ts';
import { GATEWAY_RESPONSES, METHOD_NOT_ALLOWED } from '#shared/http/gateway-responses.ts';
import type { HttpMethod, RouteDefinition } from '#shared/platform/routes.ts';
import { LOCAL_ACCOUNT_ID, lambdaContext } from './lambda-context.ts';
import { isLoopbackHost, LOCAL_HOST } from './ports.ts';
import {
  AUTHORIZERS,
  API_GATEWAY_MAX_HEADER_BYTES,
  API_GATEWAY_MAX_REQUEST_BYTES,
  API_GATEWAY_TIMEOUT_MS,
  LAMBDA_MAX_PAYLOAD_BYTES,
} from '#shared/platform/routes.ts';

/**
 * A local stand-in for API Gateway (REST, v1 proxy integration). It builds the
 * events Lambda receives in AWS, runs the same request authorizer with the same
 * cache key, enforces the same caps, and answers with the same gateway
 * responses, so handlers cannot tell where they run.
 */

type LambdaHandler<E, R> = (event: E, context: Context) => Promise<R>;

export interface ApiGatewayEmulatorOptions {
  routes: readonly RouteDefinition[];
  functionsDir: string;
  port: number;
  host?: string;
  stage: string;
  binaryMediaTypes: readonly string[];
  authorizerHandler: string;
  authorizerCacheTtlSeconds: number;
  /** Runs a function's invocation as that function (local/runtime.ts: in its own container). */
  invokeAs?: <R>(functionName: string, invoke: () => Promise<R>) => Promise<R>;
  /** API Gateway's integration timeout; tests shorten it. */
  integrationTimeoutMs?: number;
  /** Every API function's memory and timeout (default: what CDK deploys); tests shorten the timeout. */
  functionSizing?: FunctionSizing;
  /**
   * Local-only pages and endpoints (the demo checkout), tried before the API's
   * routes; resolves true when it answered. Not part of the route table, never deployed.
   */
  localRoutes?: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<boolean>;
  log?: (line: Record<string, unknown>) => void;
}

export interface ApiGatewayEmulator {
  url: string;
  port: number;
  /** Drops every cached authorizer answer, as API Gateway's FlushStageAuthorizersCache does. */
  flushAuthorizerCache(): void;
  close(): Promise<void>;
}

interface CompiledResource {
  template: string;
  pattern: RegExp;
  parameterNames: string[];
  methods: Map<HttpMethod, RouteDefinition>;
}


const API_ID = 'local';

/**
 * Longer than the house's 80 lines on purpose: the request path (route match,
 * authorizer with its cache, handler call, response shaping) is a set of
 * closures over one server's state (compiled routes, loaded handlers, the
 * authorizer cache), each step already a named function of its own.
 */
export async function startApiGatewayEmulator(options: ApiGatewayEmulatorOptions): Promise<ApiGatewayEmulator> {
  const resources = compileResources(options.routes);
  const loadHandler = moduleLoader(options.functionsDir, options.invokeAs ?? ((_name, invoke) => invoke()));
  const authorizerCache = new Map<string, { result: APIGatewayAuthorizerResult; expiresAt: number }>();
  /** Bumped by every flush: an answer that was being computed across a flush is not cached. */
  let cacheGeneration = 0;
  const log = options.log ?? (() => {});
  const functionSizing = options.functionSizing ?? API_FUNCTION_SIZING;

  const server = http.createServer({ maxHeaderSize: 64 * 1024, requestTimeout: 120_000 }, (req, res) => {
    const requestId = randomUUID();
    const startedAt = Date.now();
    res.on('finish', () =>
      log({ message: 'request', request_id: requestId, method: req.method, path: (req.url ?? '').split('?')[0], status: res.statusCode, latency_ms: Date.now() - startedAt }),
    );
    handle(req, res, requestId).catch((error: unknown) => {
      log({ level: 'ERROR', message: 'emulator failure', request_id: requestId, error: String(error) });
      if (!res.headersSent) sendGatewayResponse(res, 'DEFAULT_5XX', requestId);
      else res.destroy();
    });
  });

  // Malformed requests never reach a handler: answer in the envelope, keep serving.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const status = tooLarge ? 413 : 400;
    const body = JSON.stringify(
      errorEnvelope(tooLarge ? 'HEADERS_TOO_LARGE' : 'INVALID_REQUEST', tooLarge ? 'request headers are too large' : 'malformed HTTP request'),
    );
    // Every answer names its request, these too (the contract's X-Request-Id), and logs it.
    const requestId = randomUUID();
    log({ message: 'request', request_id: requestId, status, error: error.code });
    socket.end(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, requestId: string): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = (req.method ?? 'GET').toUpperCase();
    if (options.localRoutes && !url.pathname.startsWith('/v3/') && (await options.localRoutes(req, res))) return;

    if (headerBytes(req) > API_GATEWAY_MAX_HEADER_BYTES) {
      return sendJson(res, 413, requestId, errorEnvelope('HEADERS_TOO_LARGE', `request headers exceed ${API_GATEWAY_MAX_HEADER_BYTES} bytes`));
    }
    const declaredLength = Number(req.headers['content-length'] ?? 0);
    if (declaredLength > API_GATEWAY_MAX_REQUEST_BYTES) return refuseOversizeBody(req, res, requestId);

    const match = matchResource(resources, url.pathname);
    if (!match) return sendGatewayResponse(res, 'MISSING_AUTHENTICATION_TOKEN', requestId);
    const route = match.resource.methods.get(method as HttpMethod);
    if (!route) {
      const allow = [...match.resource.methods.keys()].join(', ');
      return sendJson(res, METHOD_NOT_ALLOWED.statusCode, requestId, errorEnvelope(METHOD_NOT_ALLOWED.code, METHOD_NOT_ALLOWED.message), { Allow: allow });
    }

    const body = await readBody(req, API_GATEWAY_MAX_REQUEST_BYTES);
    if (body === 'too-large') return refuseOversizeBody(req, res, requestId);

    const event = proxyEvent(req, url, route, match, body, requestId, options);

    if (route.auth !== 'none') {
      const decision = await authorize(event, route);
      if (decision.kind !== 'allow') return sendGatewayResponse(res, decision.kind, requestId);
      // The proxy integration receives context values as strings, whatever the authorizer returned.
      const context = Object.fromEntries(Object.entries(decision.result.context ?? {}).map(([name, value]) => [name, String(value)]));
      event.requestContext.authorizer = { ...context, principalId: decision.result.principalId, integrationLatency: 0 };
    }

    if (Buffer.byteLength(JSON.stringify(event)) > LAMBDA_MAX_PAYLOAD_BYTES) return sendGatewayResponse(res, 'REQUEST_TOO_LARGE', requestId);

    const handler = await loadHandler<APIGatewayProxyEvent, APIGatewayProxyResult>(route.handler);
    const outcome = await invokeWithTimeout(handler, event, route.handler, functionSizing, options.integrationTimeoutMs ?? API_GATEWAY_TIMEOUT_MS);
    if (outcome.kind === 'timeout') return sendGatewayResponse(res, 'INTEGRATION_TIMEOUT', requestId);
    if (outcome.kind === 'error' || !isProxyResult(outcome.value)) {
      log({ level: 'ERROR', message: 'handler failed or returned a malformed proxy result', request_id: requestId, error: outcome.kind === 'error' ? String(outcome.error) : 'malformed' });
      return sendGatewayResponse(res, 'DEFAULT_5XX', requestId);
    }
    writeProxyResult(res, outcome.value, requestId);
  }

  type Decision = { kind: 'allow'; result: APIGatewayAuthorizerResult } | { kind: GatewayResponseKind };

  /** One authorizer per authenticated kind, each with its own identity sources and cache, as in CDK. */
  async function authorize(event: APIGatewayProxyEvent, route: RouteDefinition): Promise<Decision> {
    if (route.auth === 'none') throw new Error(`route ${route.handler} has no authorizer`);
    const authorizer = AUTHORIZERS[route.auth];
    const identity = authorizer.identityHeaders.map((name) => findHeader(event.headers, name.toLowerCase()));
    // API Gateway refuses without calling the authorizer when an identity source is missing.
    if (identity.some((value) => !value)) return { kind: 'UNAUTHORIZED' };
    // The cache key is the identity sources: the headers, and context variables such as the caller's address (identity.sourceIp).
    const contextValues = authorizer.identityContext.map((variable) => String(variable.split('.').reduce<unknown>((value, name) => (value as Record<string, unknown> | undefined)?.[name], event.requestContext)));
    const cacheKey = [authorizer.name, ...identity, ...contextValues].join('\n');
    const cached = authorizerCache.get(cacheKey);
    // A flush while the authorizer runs (a revocation) must not be undone by storing its answer afterwards.
    const generation = cacheGeneration;
    const methodArn = `arn:aws:execute-api:us-east-1:${LOCAL_ACCOUNT_ID}:${API_ID}/${options.stage}/${route.method}${event.path}`;
    let result = cached && cached.expiresAt > Date.now() ? cached.result : undefined;
    if (!result) {
      const authorizerFunction = await loadHandler<APIGatewayRequestAuthorizerEvent, APIGatewayAuthorizerResult>(options.authorizerHandler);
      const outcome = await invokeWithTimeout(authorizerFunction, authorizerEvent(event, methodArn), options.authorizerHandler, functionSizing, 10_000);
      if (outcome.kind === 'error' && outcome.error instanceof Error && outcome.error.message === 'Unauthorized') return { kind: 'UNAUTHORIZED' };
      if (outcome.kind !== 'ok') return { kind: 'AUTHORIZER_FAILURE' };
      result = outcome.value;
      if (options.authorizerCacheTtlSeconds > 0 && generation === cacheGeneration) {
        authorizerCache.set(cacheKey, { result, expiresAt: Date.now() + options.authorizerCacheTtlSeconds * 1000 });
      }
    }
    return policyAllows(result, methodArn) ? { kind: 'allow', result } : { kind: 'ACCESS_DENIED' };
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? LOCAL_HOST, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://localhost:${port}`,
    port,
    flushAuthorizerCache: () => {
      cacheGeneration += 1;
      authorizerCache.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function compileResources(routes: readonly RouteDefinition[]): CompiledResource[] {
  const byTemplate = new Map<string, CompiledResource>();
  for (const route of routes) {
    const template = route.path;
    let resource = byTemplate.get(template);
    if (!resource) {
      const parameterNames: string[] = [];
      const source = template
        .split('/')
        .map((segment) => {
          const parameter = /^\{(\w+)\}$/.exec(segment);
          if (!parameter?.[1]) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          parameterNames.push(parameter[1]);
          return '([^/]+)';
        })
        .join('/');
      resource = { template, pattern: new RegExp(`^${source}$`), parameterNames, methods: new Map() };
      byTemplate.set(template, resource);
    }
    resource.methods.set(route.method, route);
  }
  // Literal segments win over parameters, as in API Gateway: fewer parameters first.
  return [...byTemplate.values()].sort((a, b) => a.parameterNames.length - b.parameterNames.length);
}

function matchResource(resources: CompiledResource[], pathname: string): { resource: CompiledResource; parameters: Record<string, string> } | undefined {
  // A trailing slash names the same resource.
  const normalized = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
  for (const resource of resources) {
    const found = resource.pattern.exec(normalized);
    if (!found) continue;
    const parameters: Record<string, string> = Object.create(null) as Record<string, string>;
    try {
      resource.parameterNames.forEach((name, index) => (parameters[name] = decodeURIComponent(found[index + 1] ?? '')));
    } catch {
      return undefined;
    }
    return { resource, parameters };
  }
  return undefined;
}

/** The request's headers, each under the name it was first sent by with every value it had, as API Gateway passes them on. */
function receivedHeaders(req: http.IncomingMessage): Array<{ name: string; values: string[] }> {
  const multiValueHeaders = new Map<string, { name: string; values: string[] }>();
  for (let index = 0; index < req.rawHeaders.length; index += 2) {
    const name = req.rawHeaders[index] as string;
    const value = req.rawHeaders[index + 1] as string;
    const entry = multiValueHeaders.get(name.toLowerCase()) ?? { name, values: [] };
    entry.values.push(value);
    multiValueHeaders.set(name.toLowerCase(), entry);
  }
  multiValueHeaders.set('x-forwarded-proto', { name: 'X-Forwarded-Proto', values: ['http'] });
  return [...multiValueHeaders.values()];
}

function proxyEvent(
  req: http.IncomingMessage,
  url: URL,
  route: RouteDefinition,
  match: { resource: CompiledResource; parameters: Record<string, string> },
  body: Buffer,
  requestId: string,
  options: ApiGatewayEmulatorOptions,
): APIGatewayProxyEvent {
  // Client-chosen names (headers, query parameters) go into maps without a prototype, so `constructor`
  // or `__proto__` is just a name here too; the events themselves are plain JSON-shaped objects, as in AWS.
  const headerEntries = receivedHeaders(req);
  const headers = Object.fromEntries(headerEntries.map(({ name, values }) => [name, values[values.length - 1] as string]));

  const multiValueQuery = new Map<string, string[]>();
  for (const [name, value] of url.searchParams) {
    const values = multiValueQuery.get(name);
    if (values) values.push(value);
    else multiValueQuery.set(name, [value]);
  }
  const hasQuery = multiValueQuery.size > 0;

  const mediaType = (findHeader(headers, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const binary = options.binaryMediaTypes.includes(mediaType);
  const now = new Date();
  return {
    resource: route.path,
    path: url.pathname,
    httpMethod: route.method,
    headers,
    multiValueHeaders: Object.fromEntries(headerEntries.map(({ name, values }) => [name, values])),
    queryStringParameters: hasQuery ? Object.fromEntries([...multiValueQuery].map(([name, values]) => [name, values[values.length - 1] as string])) : null,
    multiValueQueryStringParameters: hasQuery ? Object.fromEntries(multiValueQuery) : null,
    pathParameters: match.resource.parameterNames.length > 0 ? match.parameters : null,
    stageVariables: null,
    body: body.length === 0 ? null : binary ? body.toString('base64') : body.toString('utf8'),
    isBase64Encoded: body.length > 0 && binary,
    requestContext: {
      accountId: LOCAL_ACCOUNT_ID,
      apiId: API_ID,
      authorizer: null,
      domainName: servedHost(findHeader(headers, 'host'), req.socket.localPort ?? 0),
      domainPrefix: 'localhost',
      extendedRequestId: requestId,
      httpMethod: route.method,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        user: null,
        userAgent: findHeader(headers, 'user-agent') ?? null,
        userArn: null,
      },
      // Locally the API is served at the root, so there is no stage segment in the URL.
      path: url.pathname,
      protocol: `HTTP/${req.httpVersion}`,
      requestId,
      requestTime: now.toUTCString(),
      requestTimeEpoch: now.getTime(),
      resourceId: API_ID,
      resourcePath: route.path,
      stage: options.stage,
    },
  };
}

function authorizerEvent(event: APIGatewayProxyEvent, methodArn: string): APIGatewayRequestAuthorizerEvent {
  return {
    type: 'REQUEST',
    methodArn,
    resource: event.resource,
    path: event.path,
    httpMethod: event.httpMethod,
    headers: event.headers,
    multiValueHeaders: event.multiValueHeaders,
    pathParameters: event.pathParameters,
    queryStringParameters: event.queryStringParameters,
    multiValueQueryStringParameters: event.multiValueQueryStringParameters,
    stageVariables: event.stageVariables,
    requestContext: event.requestContext,
  } as APIGatewayRequestAuthorizerEvent;
}

function policyAllows(result: APIGatewayAuthorizerResult, methodArn: string): boolean {
  const statements = result.policyDocument?.Statement ?? [];
  const matches = (resource: string | string[] | undefined) =>
    [resource ?? []].flat().some((arn) => new RegExp(`^${arn.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`).test(methodArn));
  const resourceOf = (statement: (typeof statements)[number]) => ('Resource' in statement ? (statement.Resource as string | string[]) : undefined);
  if (statements.some((statement) => statement.Effect === 'Deny' && matches(resourceOf(statement)))) return false;
  return statements.some((statement) => statement.Effect === 'Allow' && matches(resourceOf(statement)));
}

function moduleLoader(functionsDir: string, invokeAs: NonNullable<ApiGatewayEmulatorOptions['invokeAs']>) {
  const loaded = new Map<string, Promise<unknown>>();
  return async <E, R>(handlerName: string): Promise<LambdaHandler<E, R>> => {
    let module = loaded.get(handlerName);
    if (!module) {
      module = invokeAs(handlerName, () => import(pathToFileURL(path.join(functionsDir, `${handlerName}.ts`)).href));
      loaded.set(handlerName, module);
    }
    const { handler } = (await module) as { handler: LambdaHandler<E, R> };
    return (event, context) => invokeAs(handlerName, () => handler(event, context));
  };
}

type Outcome<R> = { kind: 'ok'; value: R } | { kind: 'error'; error: unknown } | { kind: 'timeout' };

/**
 * One invocation as API Gateway sees it: the function's own timeout (every
 * function behind the API has the same sizing) ends the run as a failed
 * invocation, and the gateway stops waiting at `gatewayTimeoutMs`, whichever
 * comes first.
 */
async function invokeWithTimeout<E, R>(handler: LambdaHandler<E, R>, event: E, functionName: string, sizing: FunctionSizing, gatewayTimeoutMs: number): Promise<Outcome<R>> {
  const context = lambdaContext(functionName, sizing);
  const timers: NodeJS.Timeout[] = [];
  const after = (ms: number, outcome: Outcome<R>) =>
    new Promise<Outcome<R>>((resolve) => {
      timers.push(setTimeout(() => resolve(outcome), ms));
    });
  try {
    return await Promise.race([
      handler(event, context).then(
        (value): Outcome<R> => ({ kind: 'ok', value }),
        (error: unknown): Outcome<R> => ({ kind: 'error', error }),
      ),
      after(context.getRemainingTimeInMillis(), { kind: 'error', error: new Error(`${functionName}: Task timed out`) }),
      after(gatewayTimeoutMs, { kind: 'timeout' }),
    ]);
  } finally {
    for (const timer of timers) clearTimeout(timer);
  }
}

function isProxyResult(value: unknown): value is APIGatewayProxyResult {
  return typeof value === 'object' && value !== null && typeof (value as APIGatewayProxyResult).statusCode === 'number';
}

function writeProxyResult(res: http.ServerResponse, result: APIGatewayProxyResult, requestId: string): void {
  res.statusCode = result.statusCode;
  for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, String(value));
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) res.setHeader(name, values.map(String));
  if (!res.hasHeader('x-request-id')) res.setHeader('X-Request-Id', requestId);
  const body = result.body ? Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8') : Buffer.alloc(0);
  res.setHeader('Content-Length', body.length);
  res.end(body);
}

function sendGatewayResponse(res: http.ServerResponse, kind: GatewayResponseKind, requestId: string): void {
  const spec = GATEWAY_RESPONSES[kind];
  sendJson(res, spec.statusCode, requestId, errorEnvelope(spec.code, spec.message), spec.headers);
}

function sendJson(res: http.ServerResponse, status: number, requestId: string, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), 'X-Request-Id': requestId, ...headers });
  res.end(text);
}

/** Answer at once, then read on (bounded) so the client sees the answer rather than a reset. */
function refuseOversizeBody(req: http.IncomingMessage, res: http.ServerResponse, requestId: string): void {
  res.setHeader('Connection', 'close');
  sendGatewayResponse(res, 'REQUEST_TOO_LARGE', requestId);
  let drained = 0;
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > 4 * API_GATEWAY_MAX_REQUEST_BYTES) req.destroy();
  });
  req.resume();
}

async function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) return 'too-large';
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function headerBytes(req: http.IncomingMessage): number {
  let total = 0;
  for (let index = 0; index < req.rawHeaders.length; index += 2) {
    total += Buffer.byteLength(req.rawHeaders[index] ?? '', 'latin1') + Buffer.byteLength(req.rawHeaders[index + 1] ?? '', 'latin1') + 4;
  }
  return total;
}

function findHeader(headers: Record<string, string | undefined>, name: string): string | undefined {
  const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

/**
 * The host links are built on (the event's domainName, as API Gateway sets
 * it): the request's Host when it names this machine by a loopback name, and
 * otherwise the runtime's own, so a page that reached the API by a name of
 * its own (DNS rebinding) never sees that name in a link.
 */
function servedHost(host: string | undefined, port: number): string {
  return host !== undefined && isLoopbackHost(host) ? host : `localhost:${port}`;
}
