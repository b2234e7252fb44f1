/**
 * Error answers API Gateway gives without running our code, from the table the
 * local emulator answers with: gateway responses (401, unknown path, throttling,
 * 5xx...) and the MOCK methods behind a known path called with another method.
 */
import {
  AuthorizationType,
  ContentHandling,
  MockIntegration,
  PassthroughBehavior,
  ResponseType,
} from 'aws-cdk-lib/aws-apigateway';
import type { IResource, Method, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { errorEnvelope } from '#shared/http/envelope.ts';
import { GATEWAY_RESPONSES } from '#shared/http/gateway-responses.ts';
import type { GatewayResponseKind, GatewayResponseSpec } from '#shared/http/gateway-responses.ts';

/**
 * The handlers' envelope, with the environment of the stack being synthesized
 * (errorEnvelope reads it from the running process).
 */
function errorBody(environment: string, spec: GatewayResponseSpec): string {
  const { response } = errorEnvelope(spec.code, spec.message);
  return JSON.stringify({ response: { ...response, environment } });
}

/**
 * Every answer API Gateway gives itself (401 from the authorizer, 403, 429
 * throttling, 5xx, unknown paths...) carries the envelope and X-Request-Id, the
 * same request id the functions answer with and the access log records, so a
 * merchant can quote it for any error.
 */
export function addGatewayErrorResponses(api: RestApi, environment: string): void {
  for (const [kind, spec] of Object.entries(GATEWAY_RESPONSES) as [GatewayResponseKind, GatewayResponseSpec][]) {
    api.addGatewayResponse(kind, {
      type: ResponseType.of(kind),
      statusCode: String(spec.statusCode),
      responseHeaders: { ...staticValues({ 'Content-Type': 'application/json', ...spec.headers }), ...REQUEST_ID_HEADER },
      templates: { 'application/json': errorBody(environment, spec) },
    });
  }
}

/** An unquoted mapping value names a context variable: API Gateway's request id (`$context.requestId`). */
const REQUEST_ID_HEADER = { 'X-Request-Id': 'context.requestId' } as const;

/** Request types the mock maps; any other Content-Type is refused (see PassthroughBehavior.NEVER). */
const MOCK_REQUEST_TYPES = ['application/json', 'multipart/form-data'];

/**
 * An `ANY` method that answers `spec` from API Gateway itself. Explicit methods
 * on the same resource take precedence over `ANY`, so it only sees the others.
 */
export function addMockErrorMethod(resource: IResource, environment: string, spec: GatewayResponseSpec): Method {
  const status = String(spec.statusCode);
  const headers: Record<string, string> = {
    ...staticValues({ 'Content-Type': 'application/json', ...spec.headers }),
    ...REQUEST_ID_HEADER,
  };
  const integration = new MockIntegration({
    requestTemplates: Object.fromEntries(MOCK_REQUEST_TYPES.map((type) => [type, JSON.stringify({ statusCode: spec.statusCode })])),
    // A body passed through would reach the mock, which reads its status from it and fails with a 500;
    // NEVER answers an unmapped Content-Type with the 415 gateway response instead.
    passthroughBehavior: PassthroughBehavior.NEVER,
    // Lets the template apply to multipart bodies, which arrive as binary.
    contentHandling: ContentHandling.CONVERT_TO_TEXT,
    integrationResponses: [{
      statusCode: status,
      responseParameters: mapKeys(headers, (name) => `method.response.header.${name}`),
      responseTemplates: { 'application/json': errorBody(environment, spec) },
    }],
  });
  return resource.addMethod('ANY', integration, {
    authorizationType: AuthorizationType.NONE,
    methodResponses: [{
      statusCode: status,
      responseParameters: Object.fromEntries(Object.keys(headers).map((name) => [`method.response.header.${name}`, true])),
    }],
  });
}

/** API Gateway reads an unquoted mapping value as a parameter or variable name. */
function staticValues(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, `'${value}'`]));
}

function mapKeys(values: Readonly<Record<string, string>>, key: (name: string) => string): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [key(name), value]));
}
