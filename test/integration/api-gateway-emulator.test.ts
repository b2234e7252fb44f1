import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiGatewayEmulator, ApiGatewayEmulatorOptions } from '../../local/api-gateway.ts';
import { startApiGatewayEmulator } from '../../local/api-gateway.ts';
import type { Identity } from '../support/api.ts';
import { authHeaders, MERCHANT, PARTNER, UNRELATED, useRuntimeEnvironment } from '../support/api.ts';
import { fixtureEmulatorOptions } from '../support/emulator.ts';

let emulator: ApiGatewayEmulator;
const emulatorOptions: ApiGatewayEmulatorOptions = fixtureEmulatorOptions({ integrationTimeoutMs: 300 });

beforeAll(async () => {
  // The real authorizer, against the stores of the runtime the global setup started.
  useRuntimeEnvironment();
  emulator = await startApiGatewayEmulator(emulatorOptions);
});
afterAll(() => emulator.close());

async function send(pathAndQuery: string, init: RequestInit & { as?: Identity | null } = {}) {
  const identity = init.as === undefined ? MERCHANT : init.as;
  const response = await fetch(`${emulator.url}${pathAndQuery}`, {
    ...init,
    headers: { ...(identity ? authHeaders(identity) : {}), ...(init.headers as Record<string, string>) },
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
}

function expectErrorEnvelope(body: { response: Record<string, unknown> }, code: string): void {
  expect(body.response).toMatchObject({ environment: 'local', response_code: code });
  expect(body.response.response_desc).toMatch(/^Error\[1\]: /);
  expect(Array.isArray(body.response.errors)).toBe(true);
}

describe('routing', () => {
  it('answers an unknown path with 404 in the error envelope and a request id', async () => {
    const answer = await send('/v3/nothing/here');
    expect(answer.status).toBe(404);
    expectErrorEnvelope(answer.body, 'NOT_FOUND');
    expect(answer.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers a known path with the wrong method with 405 and Allow', async () => {
    const answer = await send('/v3/organizations/org_200/echo', { method: 'DELETE' });
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('GET, POST');
    expectErrorEnvelope(answer.body, 'METHOD_NOT_ALLOWED');
  });

  it('treats a trailing slash as the same route', async () => {
    const answer = await send('/v3/organizations/org_200/echo/?a=1&a=2&b=x%20y');
    expect(answer.status).toBe(200);
    expect(answer.body.query).toEqual({ a: ['1', '2'], b: ['x y'] });
  });

  it('answers 404 for a path segment without its prefix', async () => {
    const answer = await send('/v3/organizations/200/echo');
    expect(answer.status).toBe(404);
    expectErrorEnvelope(answer.body, 'NOT_FOUND');
  });

  it('builds absolute /v3 links from the request', async () => {
    const answer = await send('/v3/organizations/org_200/echo');
    expect(answer.body.links.self).toBe(`${emulator.url}/v3/organizations/org_200/echo`);
    expect(answer.body.response).toEqual({ environment: 'local', response_desc: 'Get Successful.' });
  });
});

describe('authentication', () => {
  const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;
  const cases: Array<[string, Record<string, string>]> = [
    ['no headers at all', {}],
    ['no organization header', { Authorization: basic('merchant-id:merchant-key') }],
    ['no Authorization header', { 'X-Service-Auth-Organization-Id': 'org_200' }],
    ['a wrong secure key', { Authorization: basic('merchant-id:wrong'), 'X-Service-Auth-Organization-Id': 'org_200' }],
    ['an unknown access id', { Authorization: basic('nobody:merchant-key'), 'X-Service-Auth-Organization-Id': 'org_200' }],
    ['a credential of another organization', { Authorization: basic('merchant-id:merchant-key'), 'X-Service-Auth-Organization-Id': 'org_100' }],
    ['a malformed organization header', { Authorization: basic('merchant-id:merchant-key'), 'X-Service-Auth-Organization-Id': '200' }],
    ['a Bearer scheme', { Authorization: 'Bearer abc', 'X-Service-Auth-Organization-Id': 'org_200' }],
    ['Basic without a colon', { Authorization: basic('merchant-id'), 'X-Service-Auth-Organization-Id': 'org_200' }],
    ['Basic that is not base64', { Authorization: 'Basic ***', 'X-Service-Auth-Organization-Id': 'org_200' }],
    ['Basic that is not UTF-8', { Authorization: `Basic ${Buffer.from([0xff, 0xfe, 0x3a, 0x41]).toString('base64')}`, 'X-Service-Auth-Organization-Id': 'org_200' }],
  ];
  it.each(cases)('answers 401 with WWW-Authenticate for %s', async (_name, headers) => {
    const answer = await send('/v3/organizations/org_200/echo', { as: null, headers });
    expect(answer.status).toBe(401);
    expect(answer.headers.get('www-authenticate')).toBe('Basic realm="payments"');
    expectErrorEnvelope(answer.body, 'UNAUTHORIZED');
  });

  it('answers 401 for an organization header with non-ASCII bytes', async () => {
    const status = await rawRequest(
      `GET /v3/organizations/org_200/echo HTTP/1.1\r\nHost: x\r\nAuthorization: Basic ${Buffer.from('merchant-id:merchant-key').toString('base64')}\r\nX-Service-Auth-Organization-Id: org_\xe9\xff\r\nConnection: close\r\n\r\n`,
    );
    expect(status).toMatch(/^HTTP\/1.1 401/);
  });

  it('lets the partner and the merchant in, and keeps an unrelated organization out', async () => {
    const partner = await send('/v3/organizations/org_200/echo', { as: PARTNER });
    const merchant = await send('/v3/organizations/org_200/echo', { as: MERCHANT });
    const unrelated = await send('/v3/organizations/org_200/echo', { as: UNRELATED });
    expect([partner.status, merchant.status, unrelated.status]).toEqual([200, 200, 403]);
    expect(partner.body.caller).toEqual({ organizationId: 'org_100', accessId: 'partner-id' });
    expectErrorEnvelope(unrelated.body, 'FORBIDDEN');
  });

  it('does not let a merchant reach its partner', async () => {
    expect((await send('/v3/organizations/org_100/echo', { as: MERCHANT })).status).toBe(403);
  });
});

describe('JSON bodies', () => {
  const post = (body: string | undefined, contentType?: string) =>
    send('/v3/organizations/org_200/echo', { method: 'POST', body, headers: contentType ? { 'Content-Type': contentType } : {} });

  it('passes a JSON object through, with null members treated as absent', async () => {
    const answer = await post(JSON.stringify({ a: 1, b: null, c: { d: null, e: 'x' } }), 'application/json; charset=utf-8');
    expect(answer.status).toBe(201);
    expect(answer.body.body).toEqual({ a: 1, c: { e: 'x' } });
    expect(answer.headers.get('location')).toMatch(/\/v3\/organizations\/org_200\/echo\/1$/);
  });

  it.each([
    ['invalid JSON', '{"a":', 'application/json', 400, 'INVALID_JSON'],
    ['an empty body', undefined, 'application/json', 400, 'INVALID_JSON'],
    ['a JSON array', '[1,2]', 'application/json', 400, 'INVALID_JSON'],
    ['a JSON string', '"x"', 'application/json', 400, 'INVALID_JSON'],
    ['text/plain', '{"a":1}', 'text/plain', 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['no Content-Type', '{"a":1}', undefined, 415, 'UNSUPPORTED_MEDIA_TYPE'],
  ] as const)('refuses %s', async (_name, body, contentType, status, code) => {
    const answer = await post(body, contentType);
    expect(answer.status).toBe(status);
    expectErrorEnvelope(answer.body, code);
  });
});

describe('caps and failures', () => {
  it('answers 413 in the envelope for huge headers and keeps serving', async () => {
    const answer = await send('/v3/organizations/org_200/echo', { headers: { 'X-Big': 'x'.repeat(12_000) } });
    expect(answer.status).toBe(413);
    const giant = await rawRequest(`GET /v3/organizations/org_200/echo HTTP/1.1\r\nHost: x\r\nX-Giant: ${'y'.repeat(70_000)}\r\n\r\n`);
    expect(giant).toMatch(/^HTTP\/1.1 413/);
    expect(giant).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/);
    expect(giant).toContain('"response_code":"HEADERS_TOO_LARGE"');
    expect((await send('/v3/organizations/org_200/echo')).status).toBe(200);
  });

  it('answers a request the HTTP parser refuses with 400 in the envelope and a request id', async () => {
    const badChunk = await rawRequest(`POST /v3/organizations/org_200/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`);
    expect(badChunk).toMatch(/^HTTP\/1.1 400/);
    expect(badChunk).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/);
    expect(badChunk).toContain('"response_code":"INVALID_REQUEST"');
    expect((await send('/v3/organizations/org_200/echo')).status).toBe(200);
  });

  it('delivers binary bodies base64-encoded, as API Gateway does for binary media types', async () => {
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]);
    const answer = await send('/v3/organizations/org_200/uploads', { method: 'POST', body: bytes, headers: { 'Content-Type': 'multipart/form-data; boundary=x' } });
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ bytes: 6, sha_prefix: '89504e47' });
  });

  it('refuses a body whose proxy event exceeds the 6 MB Lambda payload cap with 413', async () => {
    const body = Buffer.alloc(4_800_000, 1); // 6.4 MB once base64-encoded
    const answer = await send('/v3/organizations/org_200/uploads', { method: 'POST', body, headers: { 'Content-Type': 'multipart/form-data; boundary=x' } });
    expect(answer.status).toBe(413);
    expect(answer.body.response.response_desc).toContain('/documents/uploads');
  });

  it('refuses a body over 10 MB with 413', async () => {
    const answer = await send('/v3/organizations/org_200/echo', { method: 'POST', body: Buffer.alloc(10 * 1024 * 1024 + 1, 32), headers: { 'Content-Type': 'application/json' } });
    expect(answer.status).toBe(413);
  });

  it('answers 503 with Retry-After when the integration times out', async () => {
    const answer = await send('/v3/slow', { as: null });
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    expectErrorEnvelope(answer.body, 'SERVICE_UNAVAILABLE');
  });

  it('answers a run that outlives its function timeout as a failed invocation: 500, before the gateway gives up', async () => {
    // Lambda stops the function at its timeout and API Gateway gets a failed invocation, not a late one.
    const shortTimeout = await startApiGatewayEmulator({ ...emulatorOptions, integrationTimeoutMs: 29_000, functionSizing: { memoryMb: 512, timeoutSeconds: 0.2 } });
    try {
      // The fixture answers 200 after 2 s, well inside the gateway's 29 s: only the function's timeout makes this a 500.
      const answer = await fetch(`${shortTimeout.url}/v3/slow`);
      expect(answer.status).toBe(500);
      expectErrorEnvelope((await answer.json()) as { response: Record<string, unknown> }, 'INTERNAL_ERROR');
    } finally {
      await shortTimeout.close();
    }
  });

  it('answers an unexpected failure with a generic 500 that leaks nothing', async () => {
    const answer = await send('/v3/broken', { as: null });
    expect(answer.status).toBe(500);
    expectErrorEnvelope(answer.body, 'INTERNAL_ERROR');
    expect(answer.text).not.toMatch(/secret|payments-local|10\.0\.0\.1|at /);
  });
});

function rawRequest(text: string): Promise<string> {
  const url = new URL(emulator.url);
  return new Promise((resolve, reject) => {
    const socket = new net.Socket();
    let received = '';
    // Written, not ended: a client that half-closes before the answer gets none from Node's server (as from API Gateway).
    socket.connect(Number(url.port), '127.0.0.1', () => socket.write(Buffer.from(text, 'latin1')));
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}
