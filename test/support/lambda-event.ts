import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { lambdaContext as localLambdaContext } from '#local/lambda-context.ts';
import { API_FUNCTION_SIZING } from '#shared/platform/function-sizing.ts';

export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/**
 * A proxy event as API Gateway sends it after the secret-credential authorizer
 * allowed `organizationId`. A Buffer body travels base64-encoded (a binary
 * media type such as multipart/form-data); anything else as JSON text.
 */
export function proxyEvent(input: {
  method: string;
  resource: string;
  path: string;
  pathParameters: Record<string, string>;
  organizationId: string;
  headers?: Record<string, string>;
  body?: unknown;
}): APIGatewayProxyEvent {
  const binary = Buffer.isBuffer(input.body);
  return {
    resource: input.resource,
    path: input.path,
    httpMethod: input.method,
    headers: { ...(binary ? {} : { 'Content-Type': 'application/json' }), Host: 'localhost', 'X-Forwarded-Proto': 'http', 'X-Service-Auth-Organization-Id': input.organizationId, ...input.headers },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: input.pathParameters,
    stageVariables: null,
    body: input.body === undefined ? null : binary ? (input.body as Buffer).toString('base64') : JSON.stringify(input.body),
    isBase64Encoded: binary,
    requestContext: {
      requestId: randomUUID(),
      path: input.path,
      domainName: 'localhost',
      authorizer: { credentialKind: 'secret', organizationId: input.organizationId, accessId: 'test' },
    } as unknown as APIGatewayProxyEvent['requestContext'],
  };
}

/** The context Lambda passes the route's function (local/lambda-context.ts). */
export function lambdaContext(functionName: string): Context {
  return localLambdaContext(functionName, API_FUNCTION_SIZING);
}
