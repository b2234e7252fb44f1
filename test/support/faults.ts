import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { lambdaContext as localLambdaContext } from '#local/lambda-context.ts';

/** A failure the service must treat as "dependency unavailable" (HTTP 503 from S3 or DynamoDB). */
export function serviceUnavailable(command: string): Error {
  return Object.assign(new Error(`${command} failed (injected)`), { name: 'ServiceUnavailable', $metadata: { httpStatusCode: 503 } });
}

type CommandClass = { new (input: never): unknown; name: string };
type Rule = { command: string; when?: (input: Record<string, unknown>) => boolean };

/**
 * Lets every listed command through to the real client (DynamoDB Local,
 * s3rver) except those matching a rule, which fail with a 503. Rules are
 * replaced per test with `failOn`.
 */
export function interpose(
  mock: { on(command: never): { callsFake(fn: (input: Record<string, unknown>, getClient: () => unknown) => unknown): unknown } },
  realSend: (this: unknown, command: unknown) => Promise<unknown>,
  commands: readonly CommandClass[],
) {
  let rules: Rule[] = [];
  const calls: Array<{ command: string; input: Record<string, unknown> }> = [];
  for (const Command of commands) {
    mock.on(Command as never).callsFake((input, getClient) => {
      calls.push({ command: Command.name, input });
      if (rules.some((rule) => rule.command === Command.name && (!rule.when || rule.when(input)))) throw serviceUnavailable(Command.name);
      return realSend.call(getClient(), new Command(input as never));
    });
  }
  return {
    failOn(...next: Rule[]) {
      rules = next;
      calls.length = 0;
    },
    calls: (command: string) => calls.filter((call) => call.command === command),
  };
}

/** The proxy event API Gateway sends after the authorizer allowed `organizationId`. */
export function proxyEvent(input: {
  method: string;
  resource: string;
  path: string;
  pathParameters: Record<string, string>;
  organizationId: string;
  headers?: Record<string, string>;
  body?: Buffer;
}): APIGatewayProxyEvent {
  const requestId = randomUUID();
  return {
    resource: input.resource,
    path: input.path,
    httpMethod: input.method,
    headers: { Host: 'localhost', 'X-Forwarded-Proto': 'http', ...input.headers },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: input.pathParameters,
    stageVariables: null,
    body: input.body ? input.body.toString('base64') : null,
    isBase64Encoded: input.body !== undefined,
    requestContext: {
      requestId,
      path: input.path,
      domainName: 'localhost',
      authorizer: { organizationId: input.organizationId, accessId: 'fault-test' },
    } as unknown as APIGatewayProxyEvent['requestContext'],
  };
}

export function lambdaContext(functionName: string): Context {
  return localLambdaContext(functionName, 30_000);
}

export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
