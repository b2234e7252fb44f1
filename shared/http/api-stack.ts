import middy from '@middy/core';
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { injectLambdaContext, logger } from '#shared/log/logger.ts';
import { recordRequest } from '#shared/observability/metrics.ts';
import { captureLambdaHandler, tracer } from '#shared/observability/tracer.ts';
import { requestClockOf, withRequestDeadline } from '#shared/runtime/deadline.ts';
import { failedAuthenticationThrottle } from './auth-throttle.ts';
import { corsHeadersForPublishable } from './cors.ts';
import { classifyError, errorResponse, internalErrorResponse } from './errors.ts';
import type { ApiRequest } from './request.ts';
import { buildApiRequest, queryParameterCheck } from './request.ts';
import type { ApiResponse } from './response.ts';
import type { RouteDefinition } from '../platform/routes.ts';

/*
 * The middleware stack of every API route, without storage: public routes
 * (public-api-handler.ts) use it as it is, so their bundles load no storage
 * client; authenticated routes (api-handler.ts) add the tenancy check.
 */

export type ApiRouteHandler = (request: ApiRequest, options: { signal: AbortSignal }) => Promise<ApiResponse>;

export interface ApiContext extends Context {
  api: ApiRequest;
}

export type ApiMiddleware = MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext>;

/**
 * The one middleware stack every API route uses: logger context (the event is
 * never logged: it carries card data) -> tracing (no response bodies in traces)
 * -> route metrics (count, 4xx, 5xx, latency, with the route dimension) -> CORS
 * for publishable keys -> request shaping (headers, path prefixes, JSON body,
 * caller) -> tenancy (authenticated routes) -> the route's use case -> the error mapper, registered
 * last so it sees every failure (and so the metrics see the status it chose).
 * An address over its failed-authentication budget is answered 429 before its
 * request is read. Everything runs under the request deadline (shared/runtime/deadline.ts),
 * counted from the request's arrival at API Gateway, so the authorizer's time and a
 * cold start come out of it too: every dependency call stops at it, and the answer
 * (503 at worst) leaves within 10 s whatever a dependency does.
 */
export function apiMiddlewareStack(route: RouteDefinition, run: ApiRouteHandler, tenancy?: ApiMiddleware) {
  const checkQuery = queryParameterCheck(route);
  const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext>({ timeoutEarlyInMillis: 1_000 })
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(captureLambdaHandler(tracer, { captureResponse: false }))
    .use(routeMetrics(route))
    .use(publishableCors())
    .use(failedAuthenticationThrottle())
    .use(apiRequest(route))
    // middy refuses a middleware with no hook: public routes simply have no tenancy step.
    .use(tenancy ? [tenancy, errorEnvelope()] : [errorEnvelope()])
    .handler(async (_event, context, { signal }) => {
      // After the tenancy check, as a list route's own query check: a caller learns nothing of an organization it may not use.
      checkQuery(context.api.query);
      return toProxyResult(await run(context.api, { signal }), context.api.requestId);
    });
  return (event: APIGatewayProxyEvent, context: Context) => withRequestDeadline(requestClockOf(event, context), () => handler(event, context as ApiContext));
}

/**
 * One metrics line per request. `after` and `onError` run after the error
 * mapper (middy runs them in reverse), so the status counted is the one the
 * client gets; a failure the mapper could not turn into a response counts as 500.
 */
function routeMetrics(route: RouteDefinition): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext> {
  const startedAt = new WeakMap<object, number>();
  const record = (request: { event: object; response: APIGatewayProxyResult | null | undefined }) => {
    const started = startedAt.get(request.event);
    recordRequest({
      route: route.handler,
      statusCode: request.response?.statusCode ?? 500,
      durationMs: started === undefined ? 0 : performance.now() - started,
    });
  };
  return {
    before: (request) => {
      startedAt.set(request.event, performance.now());
      tracer.putAnnotation('route', route.handler);
    },
    after: record,
    onError: record,
  };
}

function apiRequest(route: RouteDefinition): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext> {
  return {
    before: (request) => {
      logger.appendKeys({ request_id: request.event.requestContext?.requestId, route: `${route.method} ${route.path}` });
      request.context.api = buildApiRequest(request.event, route);
    },
  };
}

/**
 * A browser minting with a publishable key from one of the key's origins may read
 * the answer, errors included. Nothing else gets CORS headers: not secret
 * callers, not other origins, not other routes.
 */
function publishableCors(): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext> {
  const addHeaders = (request: { event: APIGatewayProxyEvent; response: APIGatewayProxyResult | null | undefined }) => {
    const cors = corsHeadersForPublishable(request.event);
    if (cors && request.response) request.response.headers = { ...request.response.headers, ...cors };
  };
  return { after: addHeaders, onError: addHeaders };
}

function errorEnvelope(): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext> {
  return {
    onError: (request) => {
      const requestId = request.event.requestContext?.requestId ?? 'unknown';
      const known = classifyError(request.error);
      if (known) {
        if (known.kind === 'unavailable') logger.warn('dependency unavailable', { error: known.cause ?? known });
        else logger.info('request refused', { response_code: known.code, status_kind: known.kind });
        request.response = toProxyResult(errorResponse(known), requestId);
      } else {
        logger.error('unhandled error', { error: request.error });
        request.response = toProxyResult(internalErrorResponse(), requestId);
      }
    },
  };
}

export function toProxyResult(response: ApiResponse, requestId: string): APIGatewayProxyResult {
  const headers: Record<string, string> = { 'X-Request-Id': requestId, 'Cache-Control': 'no-store', ...response.headers };
  if (response.text !== undefined) return { statusCode: response.statusCode, headers, body: response.text };
  if (response.body === undefined) return { statusCode: response.statusCode, headers, body: '' };
  return {
    statusCode: response.statusCode,
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(response.body),
  };
}
