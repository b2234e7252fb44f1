import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { dynamo } from '#shared/aws/dynamodb.ts';
import { config } from '#shared/config.ts';
import { assertOrganizationAccess } from '#shared/domain/tenancy.ts';
import type { OrganizationStore } from '#shared/domain/tenancy.ts';
import { logger } from '#shared/log/logger.ts';
import { CachedOrganizationStore, DynamoOrganizationStore } from '#shared/store/organizations.ts';
import { classifyError, errorResponse, internalErrorResponse } from './errors.ts';
import type { ApiRequest } from './request.ts';
import { buildApiRequest } from './request.ts';
import type { ApiResponse } from './response.ts';
import type { RouteDefinition } from './routes.ts';
import { routes } from './routes.ts';

export type ApiRouteHandler = (request: ApiRequest, options: { signal: AbortSignal }) => Promise<ApiResponse>;

interface ApiContext extends Context {
  api: ApiRequest;
}

let organizationStore: OrganizationStore | undefined;
function organizations(): OrganizationStore {
  organizationStore ??= new CachedOrganizationStore(new DynamoOrganizationStore(dynamo, config.tableName));
  return organizationStore;
}

/**
 * The one middleware stack every API route uses: logger context (the event is
 * never logged: it carries card data) -> request shaping (headers, path
 * prefixes, JSON body, caller) -> tenancy -> the route's use case -> the error
 * mapper, registered last so it sees every failure.
 */
export function apiHandler(routeOrHandlerName: string | RouteDefinition, run: ApiRouteHandler) {
  const route = typeof routeOrHandlerName === 'string' ? routeNamed(routeOrHandlerName) : routeOrHandlerName;
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext>({ timeoutEarlyInMillis: 1_000 })
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(apiRequest(route))
    .use(tenancy(route))
    .use(errorEnvelope())
    .handler(async (_event, context, { signal }) => toProxyResult(await run(context.api, { signal }), context.api.requestId));
}

export function routeNamed(handlerName: string): RouteDefinition {
  const route = routes.find((candidate) => candidate.handler === handlerName);
  if (!route) throw new Error(`No route in the route table uses handler ${handlerName}`);
  return route;
}

function apiRequest(route: RouteDefinition): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext> {
  return {
    before: (request) => {
      logger.appendKeys({ request_id: request.event.requestContext?.requestId, route: `${route.method} ${route.path}` });
      request.context.api = buildApiRequest(request.event, route);
    },
  };
}

function tenancy(route: RouteDefinition): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext> {
  return {
    before: async (request) => {
      const { caller, pathParameters } = request.context.api;
      const organizationId = pathParameters.organization_id;
      if (route.auth === 'secret' && caller && organizationId) await assertOrganizationAccess(caller, organizationId, organizations());
      if (caller) logger.appendKeys({ caller_organization_id: caller.organizationId });
    },
  };
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
  if (response.body === undefined) return { statusCode: response.statusCode, headers, body: '' };
  return {
    statusCode: response.statusCode,
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(response.body),
  };
}
