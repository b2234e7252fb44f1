import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { InvalidRequest, NotAuthenticated, Throttled, Unavailable } from '#shared/domain/errors.ts';
import { failedAuthenticationThrottle } from '#shared/http/auth-throttle.ts';
import { buildApiRequest } from '#shared/http/request.ts';
import { routes } from '#shared/platform/routes.ts';
import { errorEnvelope } from '#shared/http/envelope.ts';
import { classifyError, errorResponse } from '#shared/http/errors.ts';
import { parseJsonObject } from '#shared/http/hostile-input.ts';
import { REDACTED, redactingReplacer } from '#shared/log/redact.ts';

describe('error envelope', () => {
  it('joins every failing field in the Error[n] form and lists them', () => {
    const envelope = errorEnvelope('VALIDATION_ERROR', 'ignored', [
      { field: 'card.account_number', message: 'must contain digits only' },
      { field: 'label', message: 'must be at most 50 characters' },
    ]);
    expect(envelope.response.response_desc).toBe('Error[1]: card.account_number must contain digits only Error[2]: label must be at most 50 characters');
    expect(envelope.response.errors).toEqual([
      { field: 'card.account_number', message: 'must contain digits only' },
      { field: 'label', message: 'must be at most 50 characters' },
    ]);
  });

  it('maps domain errors to statuses, with Retry-After on 503', () => {
    expect(errorResponse(new InvalidRequest([{ field: 'a', message: 'b' }])).statusCode).toBe(400);
    const unavailable = errorResponse(new Unavailable());
    expect(unavailable.statusCode).toBe(503);
    expect(unavailable.headers).toMatchObject({ 'Retry-After': '1' });
  });

  it('treats throttling and 5xx from AWS as unavailable, and anything else as a bug', () => {
    const throttled = Object.assign(new Error('slow down'), { name: 'ProvisionedThroughputExceededException' });
    const serverError = Object.assign(new Error('boom'), { name: 'Whatever', $metadata: { httpStatusCode: 500 } });
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(classifyError(throttled)?.kind).toBe('unavailable');
    expect(classifyError(serverError)?.kind).toBe('unavailable');
    expect(classifyError(refused)?.kind).toBe('unavailable');
    expect(classifyError(new TypeError('x is undefined'))).toBeUndefined();
  });
});

describe('JSON bodies', () => {
  it('drops null members at every depth but keeps arrays as they are', () => {
    expect(parseJsonObject('{"a": null, "b": {"c": null, "d": 1}, "e": [null, 1, {"f": null}]}', 'INVALID_JSON')).toEqual({ b: { d: 1 }, e: [null, 1, {}] });
  });
});

describe('log redaction', () => {
  const serialize = (value: unknown) => JSON.stringify(value, redactingReplacer);

  it('removes secret members by name at any depth', () => {
    const line = serialize({ card: { account_number: '4111111111111111', card_verification_value: '123' }, echeck: { account_number: '1234567' }, headers: { Authorization: 'Basic abc' }, api_secure_key: 'sk_1' });
    expect(line).not.toMatch(/4111111111111111|"123"|1234567|Basic abc|sk_1/);
    expect(line).toContain(REDACTED);
  });

  it('masks card numbers and Basic credentials inside free text', () => {
    const line = serialize({ message: 'failed for 4111 1111 1111 1111 with Basic bWU6a2V5', error: 'card 5500-0000-0000-0004 declined' });
    expect(line).not.toMatch(/4111 1111|5500-0000|bWU6a2V5/);
  });

  it('leaves identifiers that are not card numbers alone', () => {
    const line = serialize({ function_arn: 'arn:aws:lambda:us-east-1:000000000000:function:x', message: 'order 123456789012 failed' });
    expect(line).toContain('000000000000');
    expect(line).toContain('123456789012');
  });
});

describe('answers the authorizer left to the route', () => {
  const throttledEvent = (until: number) => ({ requestContext: { authorizer: { credentialKind: 'throttled', throttledUntil: until } } }) as unknown as APIGatewayProxyEvent;
  const before = (event: APIGatewayProxyEvent) => failedAuthenticationThrottle().before!({ event } as never);

  it('answers a throttled attempt 429 with Retry-After until its window ends, and 401 once a cached answer outlives it', () => {
    const now = Date.now() / 1000;
    let thrown: unknown;
    try {
      before(throttledEvent(Math.ceil(now) + 20));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Throttled);
    expect((thrown as Throttled).retryAfterSeconds).toBeGreaterThanOrEqual(20);
    expect((thrown as Throttled).retryAfterSeconds).toBeLessThanOrEqual(21);
    expect(() => before(throttledEvent(Math.floor(now) - 1))).toThrow(NotAuthenticated);
    expect(() => before({ requestContext: { authorizer: { credentialKind: 'secret' } } } as unknown as APIGatewayProxyEvent)).not.toThrow();
  });

  it("takes the caller's organization from either organization header, and refuses a request naming another or two", () => {
    const route = routes.find((candidate) => candidate.auth === 'secret' && candidate.method === 'GET' && candidate.path.endsWith('/paymethods'))!;
    const event = (headers: Record<string, string>) =>
      ({
        resource: route.path,
        path: '/v3/organizations/org_1/paymethods',
        httpMethod: 'GET',
        headers: { Host: 'localhost', ...headers },
        pathParameters: { organization_id: 'org_1' },
        requestContext: { requestId: 'r', path: '/v3/organizations/org_1/paymethods', authorizer: { credentialKind: 'secret', organizationId: 'org_1', accessId: 'ak_1' } },
      }) as unknown as APIGatewayProxyEvent;
    for (const headers of [{ 'X-Service-Auth-Organization-Id': 'org_1' }, { 'x-forte-auth-organization-id': 'org_1' }, { 'X-Service-Auth-Organization-Id': 'org_1', 'X-Forte-Auth-Organization-Id': 'org_1' }] as Array<Record<string, string>>) {
      expect(buildApiRequest(event(headers), route).caller).toEqual({ organizationId: 'org_1', accessId: 'ak_1' });
    }
    for (const headers of [{}, { 'X-Service-Auth-Organization-Id': 'org_2' }, { 'X-Forte-Auth-Organization-Id': 'org_2' }, { 'X-Service-Auth-Organization-Id': 'org_1', 'X-Forte-Auth-Organization-Id': 'org_2' }] as Array<Record<string, string>>) {
      expect(() => buildApiRequest(event(headers), route), JSON.stringify(headers)).toThrow(NotAuthenticated);
    }
  });
});
