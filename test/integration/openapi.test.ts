import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { jpeg } from '../fixtures/documents.ts';
import { MERCHANT, baseUrl, call } from '../support/api.ts';
import type { ApiAnswer } from '../support/api.ts';
import { OpenApiContract } from '../support/openapi-contract.ts';
import { documentsPath, scanned, upload } from '../support/documents.ts';
import { CARD, ECHECK, PAYPAL, customerPath, locationPath, unique } from '../support/paymethods.ts';
import { PATH_PARAMETER_PREFIXES, routes } from '#shared/platform/routes.ts';

type Json = Record<string, unknown>;
interface Operation {
  method: string;
  path: string;
  operationId: string;
  security: unknown[];
  parameters?: Json[];
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, unknown>;
}

const committed = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8')) as {
  servers: Json[];
  paths: Record<string, Record<string, Omit<Operation, 'method' | 'path'>>>;
  components: { parameters: Record<string, Json> };
};
const contract = new OpenApiContract(committed as unknown as Json);

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const documented: Operation[] = Object.entries(committed.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => HTTP_METHODS.includes(method))
    .map(([method, operation]) => ({ ...operation, method: method.toUpperCase(), path })),
);

/** The gateway's answer for a path no route serves (GATEWAY_RESPONSES.MISSING_AUTHENTICATION_TOKEN). */
const NO_SUCH_ROUTE = 'Error[1]: no such route';

const operationNamed = (handler: string) => documented.find((operation) => operation.operationId === handler) as Operation;

const resolveParameter = (parameter: Json): Json =>
  typeof parameter.$ref === 'string' ? (committed.components.parameters[parameter.$ref.split('/').pop() as string] as Json) : parameter;

/** The organization is the seeded merchant's (so tenancy passes); other ids are well formed and unknown. */
function fill(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_match, name: string) =>
    name === 'organization_id' ? MERCHANT.organizationId : `${PATH_PARAMETER_PREFIXES[name] ?? ''}${randomBytes(6).toString('hex')}`,
  );
}

/**
 * The answer is one the document lists for the operation, with its required
 * headers, and its body matches the documented (closed) schema. The contract
 * recorder checks every answer of the suite the same way; checking here too
 * fails the very request that drifted.
 */
function expectDocumented(handler: string, answer: ApiAnswer<unknown>, path: string, method = operationNamed(handler).method): void {
  const result = contract.check({ method, path: new URL(path, 'http://localhost').pathname, status: answer.status, headers: answer.headers, text: answer.text });
  expect(result.operation, answer.text).toBe(`${method} ${operationNamed(handler).path}`);
  expect(result.mismatches).toEqual([]);
}

async function request(handler: string, path: string, options: { method?: string; body?: unknown; query?: string } = {}): Promise<ApiAnswer> {
  const operation = operationNamed(handler);
  const answer = await call(`${path}${options.query ? `?${options.query}` : ''}`, {
    method: options.method ?? operation.method,
    as: operation.security.length > 0 ? MERCHANT : null,
    ...(options.body !== undefined ? { body: options.body } : {}),
  });
  expectDocumented(handler, answer, path);
  return answer;
}

describe('OpenAPI document (served by the local runtime)', () => {
  it('is served at /v3/openapi.json without credentials, as JSON, cacheable, naming the server it came through, otherwise equal to docs/openapi.json', async () => {
    const answer = await call('/v3/openapi.json', { as: null });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.headers.get('cache-control')).toBe('public, max-age=300');
    expect(answer.headers.get('x-request-id')).toBeTruthy();
    expect(answer.body.servers).toEqual([{ url: baseUrl(), description: expect.any(String) }]);
    expect({ ...answer.body, servers: committed.servers }).toEqual(committed);
  });

  it('answers every documented path, called with a method it does not take, with 405 and Allow', async () => {
    for (const path of Object.keys(committed.paths)) {
      const methods = documented.filter((operation) => operation.path === path).map((operation) => operation.method);
      const other = ['PATCH', 'PUT', 'DELETE', 'GET'].find((method) => !methods.includes(method))!;
      const answer = await call(fill(path), { method: other, as: null });
      expect(answer.status, `${other} ${path}: ${answer.text}`).toBe(405);
      expect(answer.headers.get('allow')?.split(', ').sort(), path).toEqual(methods.sort());
      const result = contract.check({ method: other, path: new URL(fill(path), 'http://localhost').pathname, status: 405, headers: answer.headers, text: answer.text });
      expect(result).toEqual({ operation: `ANY ${path}`, mismatches: [] });
    }
  });

  it('revalidates tokenize.js with its ETag: 304, as documented', async () => {
    const first = await request('tokenize-js', '/v3/js/tokenize.js');
    expect(first.status).toBe(200);
    const again = await call('/v3/js/tokenize.js', { as: null, headers: { 'If-None-Match': first.headers.get('etag')! } });
    expect(again.status, again.text).toBe(304);
    expectDocumented('tokenize-js', again, '/v3/js/tokenize.js');
  });

  it('documents exactly the route table', () => {
    expect(documented.map((operation) => `${operation.method} ${operation.path} ${operation.operationId}`).sort()).toEqual(
      routes.map((route) => `${route.method} ${route.path} ${route.handler}`).sort(),
    );
  });

  it.each(documented.map((operation) => [`${operation.method} ${operation.path}`, operation] as const))(
    '%s exists in the local runtime and answers as documented',
    async (_name, operation) => {
      const json = operation.requestBody && 'application/json' in operation.requestBody.content;
      const answer = await request(operation.operationId, fill(operation.path), json ? { body: {} } : {});
      expect(answer.status, answer.text).not.toBe(405);
      if (answer.status === 404) expect((answer.body.response as Json).response_desc, answer.text).not.toBe(NO_SUCH_ROUTE);
    },
  );

  it.each(
    documented
      .filter((operation) => (operation.parameters ?? []).some((parameter) => resolveParameter(parameter).name === 'filter'))
      .map((operation) => [`${operation.method} ${operation.path}`, operation] as const),
  )('%s accepts each documented query parameter with its example', async (_name, operation) => {
    // A list under a webhook endpoint (its attempts) needs an endpoint that exists: one on loopback, removed after.
    const endpoints = `/v3/organizations/${MERCHANT.organizationId}/webhook_endpoints`;
    const endpoint = operation.path.includes('{webhook_endpoint_id}') ? await request('webhooks-create', endpoints, { body: { url: 'http://127.0.0.1:9/hook', event_types: ['paymethod.deleted'] } }) : undefined;
    if (endpoint) expect(endpoint.status, endpoint.text).toBe(201);
    const endpointId = endpoint?.body.webhook_endpoint_id as string | undefined;
    const path = fill(endpointId ? operation.path.replace('{webhook_endpoint_id}', endpointId) : operation.path);
    try {
      for (const parameter of (operation.parameters ?? []).map(resolveParameter).filter((candidate) => candidate.in === 'query')) {
        const value = parameter.example ?? (parameter.schema as Json).default;
        if (value === undefined) continue; // cursor: only links.next issues one
        const answer = await request(operation.operationId, path, { query: new URLSearchParams({ [parameter.name as string]: String(value) }).toString() });
        expect(answer.status, `${String(parameter.name)}=${String(value)}: ${answer.text}`).toBe(200);
      }
    } finally {
      if (endpointId) await request('webhooks-delete', `${endpoints}/${endpointId}`, { method: 'DELETE' });
    }
  });
});

describe('OpenAPI document (answers match the documented schemas)', () => {
  it('paymethods: creates, one-time tokens, reads, lists, update, delete', async () => {
    const org = MERCHANT.organizationId;
    const loc = unique('loc_');
    const cst = unique('cst_');

    const card = await request('paymethods-create-customer', customerPath(org, loc, cst), { body: { card: CARD, label: 'Main card', customer_id: 'C-1001' } });
    expect(card.status, card.text).toBe(201);
    const token = card.body.paymethod_token as string;
    const paymethod = `${locationPath(org, loc)}/paymethods/${token}`;

    for (const body of [{ echeck: ECHECK, customer_token: cst }, { vendor: PAYPAL }]) {
      const created = await request('paymethods-create-location', `${locationPath(org, loc)}/paymethods`, { body });
      expect(created.status, created.text).toBe(201);
    }
    const locationless = await request('paymethods-create-locationless', `/v3/customers/${unique('cst_')}/paymethods`, { body: { organization_id: org, card: CARD } });
    expect(locationless.status, locationless.text).toBe(201);

    for (const instrument of [{ card: CARD }, { echeck: ECHECK }]) {
      const minted = await request('onetimetokens-create', `${locationPath(org, loc)}/onetimetokens`, { body: instrument });
      expect(minted.status, minted.text).toBe(201);
      const sub = 'card' in instrument ? { card: { one_time_token: minted.body.one_time_token, name_on_card: 'Ann Lee' } } : { echeck: { one_time_token: minted.body.one_time_token, account_holder: 'Ann Lee' } };
      const redeemed = await request('paymethods-create-location', `${locationPath(org, loc)}/paymethods`, { body: sub });
      expect(redeemed.status, redeemed.text).toBe(201);
    }

    expect((await request('paymethods-get', paymethod)).status).toBe(200);
    expect((await request('paymethods-get-organization', `/v3/organizations/${org}/paymethods/${token}`)).status).toBe(200);
    expect((await request('paymethods-get-organization', `/v3/organizations/${org}/paymethods/${locationless.body.paymethod_token as string}`)).status).toBe(200);
    for (const [handler, path] of [
      ['paymethods-list-customer', customerPath(org, loc, cst)],
      ['paymethods-list-location', `${locationPath(org, loc)}/paymethods`],
      ['paymethods-list-organization', `/v3/organizations/${org}/paymethods`],
    ] as const) {
      const list = await request(handler, path, { query: 'page_size=2' });
      expect(list.status, list.text).toBe(200);
      expect((list.body.results as unknown[]).length, handler).toBeGreaterThan(0);
    }

    const updated = await request('paymethods-update', paymethod, { body: { label: 'Renamed', card: { expire_month: 1, expire_year: 2032 } } });
    expect(updated.status, updated.text).toBe(200);
    const removed = await request('paymethods-delete', paymethod);
    expect(removed.status, removed.text).toBe(200);
  });

  it('documents: upload, session, read, list, download, delete', async () => {
    const org = MERCHANT.organizationId;
    const stored = await upload(MERCHANT, { resource: 'application', resource_id: unique('app_'), description: 'receipt' }, { name: 'receipt.jpg', contentType: 'image/jpeg', bytes: jpeg });
    expectDocumented('documents-create', stored, documentsPath(org));
    expect(stored.status, stored.text).toBe(201);
    const id = stored.body.document_id as string;

    const session = await request('documents-create-upload', `${documentsPath(org)}/uploads`, {
      body: { resource: 'dispute', resource_id: unique('dsp_'), file_name: 'call.wav' },
    });
    expect(session.status, session.text).toBe(201);

    expect((await request('documents-get', documentsPath(org, id))).status).toBe(200);
    expect((await request('documents-get', documentsPath(org, session.body.document_id as string))).status).toBe(200);
    const list = await request('documents-list', documentsPath(org), { query: 'type=jpeg&page_size=1' });
    expect(list.status, list.text).toBe(200);
    const kept = await request('documents-update', documentsPath(org, id), { body: { legal_hold: false } });
    expect(kept.status, kept.text).toBe(200);
    expect((await scanned(MERCHANT, id)).body.scan_status).toBe('clean');
    const download = await request('documents-download', documentsPath(org, id, 'file'));
    expect(download.status, download.text).toBe(302);
    expect(download.headers.get('location')).toMatch(/^https?:\/\//);
    const pendingDownload = await request('documents-download', documentsPath(org, session.body.document_id as string, 'file'));
    expect(pendingDownload.status, pendingDownload.text).toBe(409);
    expect((await request('documents-delete', documentsPath(org, id))).status).toBe(200);
  });
});
