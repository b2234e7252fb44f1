import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';

/** A proxy event as API Gateway sends it after the authorizer allowed the caller. */
export function proxyEvent(input: { method: string; resource: string; path: string; pathParameters: Record<string, string>; body?: unknown; organizationId: string; headers?: Record<string, string> }): APIGatewayProxyEvent {
  const requestId = randomUUID();
  return {
    resource: input.resource,
    path: input.path,
    httpMethod: input.method,
    headers: { 'Content-Type': 'application/json', Host: 'localhost', ...input.headers },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: input.pathParameters,
    stageVariables: null,
    body: input.body === undefined ? null : JSON.stringify(input.body),
    isBase64Encoded: false,
    requestContext: {
      requestId,
      path: input.path,
      domainName: 'localhost',
      authorizer: { credentialKind: 'secret', organizationId: input.organizationId, accessId: 'test' },
    } as unknown as APIGatewayProxyEvent['requestContext'],
  };
}

export function lambdaContext(functionName: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'test',
    getRemainingTimeInMillis: () => 30_000,
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}
