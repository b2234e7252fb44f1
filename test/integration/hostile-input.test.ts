import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BOUNDARY, multipartBody, png, uploadParts } from '../fixtures/documents.ts';
import type { ApiAnswer } from '../support/api.ts';
import { MERCHANT, authHeaders, baseUrl, call } from '../support/api.ts';
import { CARD, customerPath, locationPath, unique } from '../support/paymethods.ts';
import type { RouteDefinition } from '#shared/platform/routes.ts';
import { PATH_PARAMETER_PREFIXES, routes } from '#shared/platform/routes.ts';

/**
 * Hostile input against the running local runtime (the API Gateway emulator
 * and the real handlers): the contract's cases one by one, then a seeded,
 * bounded property-based fuzz over JSON bodies, filters, query strings,
 * multipart bodies and headers. Whatever arrives: never a 5xx, errors always
 * in the envelope, and the service still serves afterwards.
 */
const ORG = MERCHANT.organizationId;
const LOCATION = unique('loc_hostile');
const CUSTOMER = unique('cst_h');
const CREATE = `${locationPath(ORG, LOCATION)}/paymethods`;
const LIST_ROUTES = [
  customerPath(ORG, LOCATION, CUSTOMER),
  `${locationPath(ORG, LOCATION)}/paymethods`,
  `/v3/organizations/${ORG}/paymethods`,
  `/v3/organizations/${ORG}/documents`,
];
const DOCUMENTS = `/v3/organizations/${ORG}/documents`;
const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', '__defineGetter__'];

/** The fuzz: fixed seed and a bounded number of requests (printed, so a failure can be replayed). */
const FUZZ_SEED = 1_124_2026;
const FUZZ_RUNS = 150;

function expectEnvelope(answer: ApiAnswer, context: string): void {
  expect(answer.status, `${context}: ${answer.text.slice(0, 300)}`).toBeLessThan(500);
  if (answer.status < 400) return;
  const response = (answer.body as { response?: { response_code?: unknown; response_desc?: unknown; errors?: unknown; environment?: unknown } } | undefined)?.response;
  expect(response, `${context}: ${answer.text.slice(0, 300)}`).toBeDefined();
  expect(response?.response_code, context).toMatch(/^[A-Z_]+$/);
  expect(response?.response_desc, context).toMatch(/^Error\[1\]: /);
  expect(Array.isArray(response?.errors), context).toBe(true);
  expect(typeof response?.environment, context).toBe('string');
}

const fieldsOf = (answer: ApiAnswer) => ((answer.body as { response?: { errors?: Array<{ field?: string }> } }).response?.errors ?? []).map((error) => error.field);
const codeOf = (answer: ApiAnswer) => (answer.body as { response?: { response_code?: string } }).response?.response_code;

const postJson = (path: string, text: string | Buffer, contentType = 'application/json') => call(path, { method: 'POST', rawBody: text, headers: { 'Content-Type': contentType } });
const upload = (body: Buffer, contentType = `multipart/form-data; boundary=${BOUNDARY}`) => call(DOCUMENTS, { method: 'POST', rawBody: body, headers: { 'Content-Type': contentType } });
const nestedJson = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
const cardJson = (extra: string) => `{"card": ${JSON.stringify(CARD).slice(0, -1)}${extra}}}`;
const documentMetadata = { resource: 'application', resource_id: 'app_hostile1', description: 'hostile' };

interface HostileCase {
  name: string;
  send: () => Promise<ApiAnswer>;
  status: number;
  /** A field the error must name. */
  field?: string;
  code?: string;
}

const CASES: HostileCase[] = [
  {
    name: 'body member __proto__ carrying customer_token',
    send: () => postJson(CREATE, `{"__proto__": {"customer_token": "cst_X", "label": "hidden"}, "card": ${JSON.stringify(CARD)}}`),
    status: 400,
    field: '__proto__',
  },
  { name: 'account_number under card.__proto__', send: () => postJson(CREATE, `{"card": {"__proto__": {"account_number": "4111111111111111"}, "card_type": "visa", "name_on_card": "A", "expire_month": "12", "expire_year": 2031}}`), status: 400, field: 'card.__proto__' },
  { name: 'body member constructor', send: () => postJson(CREATE, cardJson(', "constructor": {"prototype": 1}')), status: 400, field: 'card.constructor' },
  { name: 'body member prototype', send: () => postJson(CREATE, `{"prototype": "x", "card": ${JSON.stringify(CARD)}}`), status: 400, field: 'prototype' },
  { name: 'JSON nested 33 levels', send: () => postJson(CREATE, nestedJson(33)), status: 400, code: 'INVALID_JSON' },
  { name: 'JSON nested 5,000 levels', send: () => postJson(CREATE, nestedJson(5000)), status: 400, code: 'INVALID_JSON' },
  { name: 'arrays nested 100,000 levels', send: () => postJson(CREATE, `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`), status: 400, code: 'INVALID_JSON' },
  { name: 'U+0000 in a text member', send: () => postJson(CREATE, `{"label": "a\\u0000b", "card": ${JSON.stringify(CARD)}}`), status: 400, field: 'label' },
  { name: 'lone high surrogate in a text member', send: () => postJson(CREATE, cardJson(', "name_on_card": "Ann \\ud800"').replace('"name_on_card":"Ann Lee",', '')), status: 400, field: 'card.name_on_card' },
  { name: 'lone low surrogate in a text member', send: () => postJson(CREATE, `{"notes": "\\udc00", "card": ${JSON.stringify(CARD)}}`), status: 400, field: 'notes' },
  {
    name: "a surrogate's CESU-8 bytes in a text member (not UTF-8)",
    send: () => postJson(CREATE, Buffer.concat([Buffer.from('{"label": "a'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from(`b", "card": ${JSON.stringify(CARD)}}`)])),
    status: 400,
    field: 'label',
  },
  { name: 'a byte 0xFF in a text member', send: () => postJson(CREATE, Buffer.concat([Buffer.from('{"notes": "'), Buffer.from([0xff]), Buffer.from(`", "card": ${JSON.stringify(CARD)}}`)])), status: 400, field: 'notes' },
  { name: 'bytes that are not UTF-8 in a query value', send: () => call(`/v3/organizations/${ORG}/paymethods?customer_id=a%FFb`), status: 400, field: 'customer_id' },
  { name: 'charset=utf-16 JSON body', send: () => postJson(CREATE, Buffer.from(JSON.stringify({ card: CARD }), 'utf16le'), 'application/json; charset=utf-16'), status: 415 },
  { name: 'charset=iso-8859-1 JSON body (ASCII bytes)', send: () => postJson(CREATE, JSON.stringify({ card: CARD }), 'application/json; charset=iso-8859-1'), status: 415 },
  { name: 'charset=UTF-8 JSON body (accepted)', send: () => postJson(CREATE, JSON.stringify({ card: CARD, customer_token: CUSTOMER }), 'application/json; charset=UTF-8'), status: 201 },
  ...LIST_ROUTES.flatMap((route) => [
    ...['constructor', 'toString', '__proto__', 'hasOwnProperty'].map((name) => ({
      name: `query parameter ${name} on ${route.replace(/\/v3\/organizations\/org_\d+/, '')}`,
      send: () => call(`${route}?${name}=x`),
      status: 400,
      field: name,
    })),
    ...['constructor', '__proto__'].map((name) => ({
      name: `filter term ${name} on ${route.replace(/\/v3\/organizations\/org_\d+/, '')}`,
      send: () => call(`${route}?filter=${encodeURIComponent(`${name} eq 'x'`)}`),
      status: 400,
      field: 'filter',
    })),
  ]),
  { name: 'header named __proto__ and constructor', send: () => call(LIST_ROUTES[1] as string, { headers: Object.fromEntries([['__proto__', 'x'], ['constructor', 'y'], ['toString', 'z']]) as Record<string, string> }), status: 200 },
  { name: 'multipart JSON part with __proto__', send: () => upload(multipartBody(uploadParts({ ...documentMetadata, ['__proto__']: { description: 'x' } }, { name: 'a.png', contentType: 'image/png', bytes: png }).map((part, index) => (index === 0 ? { ...part, body: `{"__proto__": {"x": 1}, ${JSON.stringify(documentMetadata).slice(1)}` } : part)), BOUNDARY)), status: 400, field: '__proto__' },
  { name: 'multipart JSON part nested 5,000 levels', send: () => upload(multipartBody(uploadParts({}, { name: 'a.png', contentType: 'image/png', bytes: png }).map((part, index) => (index === 0 ? { ...part, body: nestedJson(5000) } : part)), BOUNDARY)), status: 400 },
  { name: 'multipart JSON part charset=utf-16', send: () => upload(multipartBody(uploadParts(documentMetadata, { name: 'a.png', contentType: 'image/png', bytes: png }).map((part, index) => (index === 0 ? { ...part, contentType: 'application/json; charset=utf-16' } : part)), BOUNDARY)), status: 415 },
  { name: 'multipart body Content-Type charset=iso-8859-1', send: () => upload(multipartBody(uploadParts(documentMetadata, { name: 'a.png', contentType: 'image/png', bytes: png }), BOUNDARY), `multipart/form-data; boundary=${BOUNDARY}; charset=iso-8859-1`), status: 415 },
];

describe('hostile input, case by case', () => {
  it('answers every contract case with its status, in the envelope', async () => {
    const outcomes: string[] = [];
    const failures: string[] = [];
    for (const hostile of CASES) {
      const answer = await hostile.send();
      outcomes.push(`${String(answer.status).padEnd(4)} ${hostile.name}`);
      try {
        expectEnvelope(answer, hostile.name);
        expect(answer.status, hostile.name).toBe(hostile.status);
        if (hostile.field !== undefined) expect(fieldsOf(answer), hostile.name).toContain(hostile.field);
        if (hostile.code !== undefined) expect(codeOf(answer), hostile.name).toBe(hostile.code);
      } catch (error) {
        failures.push(`${hostile.name}: ${(error as Error).message.split('\n')[0]} ${answer.text.slice(0, 300)}`);
      }
    }
    console.log(`hostile cases (status, case):\n${outcomes.join('\n')}`);
    expect(failures).toEqual([]);
  });

  it('a __proto__ member creates nothing: the customer it names has no paymethod', async () => {
    const customer = unique('cst_s');
    const answer = await postJson(CREATE, `{"__proto__": {"customer_token": "${customer}"}, "card": ${JSON.stringify(CARD)}}`);
    expect(answer.status).toBe(400);
    const list = await call<{ results: unknown[] }>(customerPath(ORG, LOCATION, customer));
    expect(list.status).toBe(200);
    expect(list.body.results).toEqual([]);
  });
});

describe('query parameters on routes that take none', () => {
  /** Each route's path with its parameters filled in: the refusal comes before any record is looked up. */
  const pathOf = (route: RouteDefinition) => route.path.replace(/\{(\w+)\}/g, (_match, name: string) => (name === 'organization_id' ? ORG : `${PATH_PARAMETER_PREFIXES[name] ?? ''}hostileq1`));

  it('every route that is not a list answers 400 INVALID_QUERY naming each parameter it does not take', async () => {
    const failures: string[] = [];
    for (const route of routes.filter((candidate) => candidate.query !== 'list')) {
      const answer = await call(`${pathOf(route)}?constructor=1&toString=x&__proto__=y`, { method: route.method, ...(route.method === 'POST' || route.method === 'PUT' ? { body: {} } : {}) });
      try {
        expectEnvelope(answer, route.handler);
        expect(answer.status, route.handler).toBe(400);
        expect(codeOf(answer), route.handler).toBe('INVALID_QUERY');
        expect(fieldsOf(answer), route.handler).toEqual(['constructor', 'toString', '__proto__']);
      } catch (error) {
        failures.push(`${route.handler}: ${(error as Error).message.split('\n')[0]} ${answer.text.slice(0, 300)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('the tokenization script takes its version parameter, once', async () => {
    expect((await call('/v3/js/tokenize.js?v=abc', { as: null })).status).toBe(200);
    const twice = await call('/v3/js/tokenize.js?v=a&v=b', { as: null });
    expect(twice.status).toBe(400);
    expect(fieldsOf(twice)).toEqual(['v']);
  });

  it('a refused create writes nothing and a refused delete deletes nothing', async () => {
    const customer = unique('cst_q');
    const create = await call(`${customerPath(ORG, LOCATION, customer)}?foo=1`, { method: 'POST', body: { card: CARD } });
    expect(create.status).toBe(400);
    expect((await call<{ results: unknown[] }>(customerPath(ORG, LOCATION, customer))).body.results).toEqual([]);

    const created = await call<{ paymethod_token: string }>(customerPath(ORG, LOCATION, customer), { method: 'POST', body: { card: CARD } });
    expect(created.status).toBe(201);
    const paymethod = `${locationPath(ORG, LOCATION)}/paymethods/${created.body.paymethod_token}`;
    expect((await call(`${paymethod}?__proto__=1`, { method: 'DELETE' })).status).toBe(400);
    expect((await call(paymethod)).status).toBe(200);

    const document = await upload(multipartBody(uploadParts(documentMetadata, { name: 'a.png', contentType: 'image/png', bytes: png }), BOUNDARY));
    expect(document.status).toBe(201);
    const documentPath = `${DOCUMENTS}/${(document.body as { document_id: string }).document_id}`;
    expect((await call(`${documentPath}?constructor=1`, { method: 'DELETE' })).status).toBe(400);
    expect((await call(documentPath)).status).toBe(200);
    expect((await call(`${documentPath}/file?x=1`)).status).toBe(400);
  });
});

// ---- the fuzz ----------------------------------------------------------------

type FuzzRequest = { label: string; method: string; path: string; headers: Record<string, string>; body?: string | Buffer };

const hostileName = fc.oneof(fc.constantFrom(...PROTOTYPE_NAMES), fc.string({ maxLength: 10 }), fc.constantFrom('card', 'label', 'customer_token', 'filter', 'page_index', 'page_size', 'cursor', 'type', 'customer_id'));
const hostileText = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom('\u0000', '\ud800', 'a\udc00', "x' and constructor eq 'y", "''", '%00', '4111111111111111', '-1', '1e3', '999999999999'),
);
const jsonValue = fc.letrec((tie) => ({
  node: fc.oneof({ maxDepth: 3 }, hostileText, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
  array: fc.array(tie('node'), { maxLength: 3 }),
  object: fc.dictionary(hostileName, tie('node'), { maxKeys: 4 }),
})).object;

/** JSON text: a generated object, sometimes wrapped around a real card, sometimes nested deep, sometimes cut short. */
const jsonText = fc.oneof(
  jsonValue.map((value) => JSON.stringify(value)),
  jsonValue.map((value) => JSON.stringify({ card: { ...CARD, ...(value as object) } })),
  fc.tuple(fc.constantFrom(...PROTOTYPE_NAMES), jsonValue).map(([name, value]) => `{"card": {"${name}": ${JSON.stringify(value)}, "card_type": "visa"}}`),
  fc.integer({ min: 28, max: 40 }).map(nestedJson),
  fc.tuple(jsonValue, fc.nat(40)).map(([value, cut]) => JSON.stringify(value).slice(0, cut)),
);
const charset = fc.constantFrom('', '; charset=utf-8', '; charset=UTF-8', '; charset=utf-16', '; charset="iso-8859-1"', '; charset=', '; charset=utf-8; charset=latin1', '; boundary=x');

const jsonBodyRequest = fc.record({ text: jsonText, charset, path: fc.constantFrom(CREATE, customerPath(ORG, LOCATION, CUSTOMER), '/v3/customers/cst_fuzz/paymethods') }).map(
  ({ text, charset: suffix, path }): FuzzRequest => ({ label: 'json body', method: 'POST', path, headers: { 'Content-Type': `application/json${suffix}` }, body: text }),
);

/** Percent-encodes the UTF-8 bytes of any string (a lone surrogate becomes U+FFFD's bytes, as a client would send). */
const percentEncoded = (text: string) => [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
/** Already-encoded odd bytes: NUL, a CESU-8 surrogate, overlong and invalid UTF-8, stray percent signs. */
const rawQueryText = fc.constantFrom('%00', '%ED%A0%80', '%FF', '%C0%80', '%', '%%', '%zz', '+', '&&', '==');
const queryPart = fc.oneof(hostileName.map(percentEncoded), rawQueryText);
const queryValue = fc.oneof(hostileText.map(percentEncoded), rawQueryText);
const queryString = fc.array(fc.tuple(queryPart, queryValue), { maxLength: 4 }).map((pairs) => pairs.map(([name, value]) => `${name}=${value}`).join('&'));
const filterExpression = fc.array(fc.tuple(hostileName, fc.constantFrom(' eq ', ' EQ ', ' ne ', ' '), hostileText, fc.constantFrom(' and ', ' AND ', ' or ', '')), { minLength: 1, maxLength: 3 }).map((terms) =>
  terms.map(([name, op, value, join]) => `${name}${op}'${value.replace(/'/g, "''")}'${join}`).join(''),
);
const listRequest = fc.record({ path: fc.constantFrom(...LIST_ROUTES), query: queryString, filter: fc.option(filterExpression, { nil: undefined }) }).map(
  ({ path, query, filter }): FuzzRequest => ({
    label: 'list query',
    method: 'GET',
    path: `${path}?${[query, filter === undefined ? '' : `filter=${percentEncoded(filter)}`].filter(Boolean).join('&')}`,
    headers: {},
  }),
);

const FORBIDDEN_FETCH_HEADERS = new Set(['content-length', 'host', 'connection', 'transfer-encoding', 'expect', 'upgrade', 'keep-alive', 'te', 'trailer', 'authorization', 'x-service-auth-organization-id']);
const headerName = fc.oneof(fc.constantFrom(...PROTOTYPE_NAMES, 'Content-Type', 'X-Forwarded-Proto', 'Origin', 'Idempotency-Key'), fc.stringMatching(/^[A-Za-z0-9_!#$%&'*+.^`|~-]{1,20}$/));
const headerValue = fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,40}[\x21-\x7e])?$/);
const headersRequest = fc.record({ path: fc.constantFrom(...LIST_ROUTES), headers: fc.array(fc.tuple(headerName, headerValue), { maxLength: 5 }) }).map(({ path, headers }): FuzzRequest => {
  const chosen: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of headers) if (!FORBIDDEN_FETCH_HEADERS.has(name.toLowerCase())) chosen[name] = value;
  return { label: 'headers', method: 'GET', path, headers: chosen };
});

const multipartRequest = fc
  .record({
    json: jsonText,
    jsonType: fc.constantFrom('application/json', 'application/json; charset=utf-16', 'text/plain', 'application/json; charset=utf-8'),
    fieldName: hostileName,
    fileName: fc.oneof(fc.constantFrom('a.png', '../../etc/a.png', 'C:\\x\\a.png', '__proto__.png'), fc.string({ maxLength: 12 })),
    fileType: fc.constantFrom('image/png', 'image/png; charset=utf-16', 'application/octet-stream', 'text/plain'),
    outerCharset: fc.constantFrom('', '; charset=utf-8', '; charset=utf-16'),
    bytes: fc.oneof(fc.constant(png), fc.uint8Array({ maxLength: 64 }).map((array) => Buffer.from(array))),
  })
  .map(({ json, jsonType, fieldName, fileName, fileType, outerCharset, bytes }): FuzzRequest => ({
    label: 'multipart',
    method: 'POST',
    path: DOCUMENTS,
    headers: { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}${outerCharset}` },
    body: multipartBody(
      [
        { name: fieldName.replace(/["\r\n]/g, '') || 'data', contentType: jsonType, body: json },
        { name: 'file', filename: fileName.replace(/["\r\n]/g, ''), contentType: fileType, body: bytes },
      ],
      BOUNDARY,
    ),
  }));

const anyRequest = fc.oneof(jsonBodyRequest, listRequest, headersRequest, multipartRequest);

async function send(request: FuzzRequest): Promise<ApiAnswer> {
  const response = await fetch(`${baseUrl()}${request.path}`, {
    method: request.method,
    headers: { ...authHeaders(MERCHANT), ...request.headers },
    ...(request.body !== undefined ? { body: request.body as RequestInit['body'] } : {}),
    redirect: 'manual',
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, body: body as Record<string, unknown>, text };
}

describe('hostile input, fuzzed', () => {
  it(`never answers 5xx, always in the envelope, and keeps serving (seed ${FUZZ_SEED}, ${FUZZ_RUNS} requests)`, async () => {
    console.log(`hostile-input fuzz: seed ${FUZZ_SEED}, ${FUZZ_RUNS} requests over JSON bodies, list queries and filters, headers and multipart bodies`);
    const kinds = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(anyRequest, async (request) => {
        kinds.set(request.label, (kinds.get(request.label) ?? 0) + 1);
        const answer = await send(request);
        expectEnvelope(answer, `${request.label} ${request.method} ${request.path} ${JSON.stringify(request.headers)} ${String(request.body ?? '').slice(0, 200)}`);
      }),
      { seed: FUZZ_SEED, numRuns: FUZZ_RUNS, endOnFailure: true },
    );
    console.log(`hostile-input fuzz requests by kind: ${JSON.stringify(Object.fromEntries(kinds))}`);

    // Still serving: a plain list and a plain create work after everything above.
    const list = await call(LIST_ROUTES[1] as string);
    expect(list.status).toBe(200);
    const created = await call(CREATE, { method: 'POST', body: { card: CARD } });
    expect(created.status, created.text).toBe(201);
  }, 180_000);
});
