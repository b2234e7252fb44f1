import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '#shared/http/openapi.ts';
import { openApiDocument, routesWithoutSchemas, serializeOpenApi } from '#shared/http/openapi.ts';
import { requestSchemas, responseSchemas, routeSchemas } from '#shared/http/route-schemas.ts';
import type { RouteDefinition } from '#shared/platform/routes.ts';
import { PATH_PARAMETER_PREFIXES, routes } from '#shared/platform/routes.ts';
import { assertCommittedOpenApiIsCurrent, bundlingDefinesFor } from '#infra/bundled-assets.ts';
import { servedOpenApi } from '#shared/http/openapi-served.ts';
import type { ResponseCode } from '#shared/platform/response-codes.ts';
import { ALL_RESPONSE_CODES, CODE_DETAILS, isResponseCode, statusOf } from '#shared/platform/response-codes.ts';
import { OpenApiContract } from '../support/openapi-contract.ts';
import { openApiProblems } from '../support/openapi-structure.ts';

const COMMITTED = fileURLToPath(new URL('../../docs/openapi.json', import.meta.url));
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

const document = openApiDocument();
const paths = document.paths as Record<string, Record<string, JsonObject>>;
const components = document.components as Record<string, Record<string, JsonObject>>;

function operations(doc: JsonObject = document): Array<{ method: string; path: string; operation: JsonObject }> {
  return Object.entries(doc.paths as Record<string, Record<string, JsonObject>>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, operation]) => ({ method: method.toUpperCase(), path, operation })),
  );
}

function operationOf(route: RouteDefinition): JsonObject {
  return paths[route.path]?.[route.method.toLowerCase()] as JsonObject;
}

function resolveResponse(response: JsonObject): JsonObject {
  return typeof response.$ref === 'string' ? (components.responses![response.$ref.split('/').pop() as string] as JsonObject) : response;
}

/** Parameters with component references resolved. */
function parametersOf(operation: JsonObject): JsonObject[] {
  return ((operation.parameters ?? []) as JsonObject[]).map((parameter) =>
    typeof parameter.$ref === 'string' ? components.parameters![parameter.$ref.split('/').pop() as string] as JsonObject : parameter,
  );
}

describe('OpenAPI document', () => {
  it('is committed as docs/openapi.json exactly as the code generates it', () => {
    const committed = readFileSync(COMMITTED, 'utf8');
    expect(committed, 'docs/openapi.json is out of date with the route table or the schemas: run `npm run openapi` and commit the result').toBe(serializeOpenApi(document));
  });

  it('generates the same text every time', () => {
    expect(serializeOpenApi(openApiDocument())).toBe(serializeOpenApi(document));
  });

  it('documents every route of the table (method, path, operationId = handler) and nothing else', () => {
    const documented = operations().map(({ method, path, operation }) => `${method} ${path} ${String(operation.operationId)}`);
    expect(documented.sort()).toEqual(routes.map((route) => `${route.method} ${route.path} ${route.handler}`).sort());
  });

  it('has a route-schemas.ts entry for every route, and none for a route that does not exist', () => {
    expect(routesWithoutSchemas(), 'add an entry to shared/http/route-schemas.ts for each of these handlers').toEqual([]);
    const handlers = new Set(routes.map((route) => route.handler));
    expect(Object.keys(routeSchemas).filter((handler) => !handlers.has(handler)), 'entries of shared/http/route-schemas.ts without a route').toEqual([]);
  });

  it('refuses to generate while a route has no route-schemas.ts entry', () => {
    const extra: RouteDefinition = { handler: 'reports-get', method: 'GET', path: '/v3/organizations/{organization_id}/reports', auth: 'secret', access: {}, summary: 'Reports' };
    expect(() => openApiDocument({ routes: [...routes, extra], schemas: routeSchemas, requestSchemas, responseSchemas })).toThrow(
      /No entry in shared\/http\/route-schemas\.ts for route handler\(s\) reports-get/,
    );
  });

  it('is structurally valid OpenAPI 3.1.0', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(openApiProblems(document)).toEqual([]);
  });

  it('has a structural check that finds what is wrong', () => {
    const broken = structuredClone(document) as Record<string, Record<string, unknown>>;
    delete (broken.info as Record<string, unknown>).version;
    const get = (broken.paths as Record<string, Record<string, JsonObject>>)['/v3/organizations/{organization_id}/documents/{document_id}']!.get!;
    get.parameters = [];
    (get.responses as JsonObject)['200'] = { $ref: '#/components/responses/Nope' };
    get.security = [{ bearer: [] }];
    const problems = openApiProblems(broken).join('\n');
    expect(problems).toContain('info.version');
    expect(problems).toContain('path parameter organization_id is not declared');
    expect(problems).toContain('#/components/responses/Nope does not resolve');
    expect(problems).toContain('security scheme bearer is not declared');
  });

  it('names its info, version and servers', () => {
    const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(document.info).toMatchObject({ title: expect.any(String), version: packageJson.version, description: expect.any(String) });
    expect(document.servers).toEqual([
      {
        url: 'https://{apiId}.execute-api.{region}.amazonaws.com/{stage}',
        description: expect.stringContaining('GET /v3/openapi.json'),
        // Variables carry only their default: swagger-parser refuses a variable's description.
        variables: { apiId: { default: expect.any(String) }, region: { default: 'us-east-1' }, stage: { default: 'dev' } },
      },
    ]);
  });

  it('is served as static text naming the server the request came through, equal to the generated document otherwise', () => {
    const served = JSON.parse(servedOpenApi('https://api.example.com/prod')) as JsonObject;
    expect(served.servers).toEqual([{ url: 'https://api.example.com/prod', description: expect.any(String) }]);
    expect({ ...served, servers: document.servers }).toEqual(document);
    expect(Object.keys(served)).toEqual(Object.keys(document));
  });

  it('cannot be deployed stale: synth refuses a docs/openapi.json that differs from what the code generates', () => {
    expect(() => bundlingDefinesFor(routes.find((route) => route.handler === 'openapi-get')!)).not.toThrow();
    const stale = path.join(mkdtempSync(path.join(tmpdir(), 'openapi-')), 'openapi.json');
    writeFileSync(stale, serializeOpenApi(document).replace('"openapi"', '"openapi" '));
    expect(() => assertCommittedOpenApiIsCurrent(pathToFileURL(stale))).toThrow(/npm run openapi/);
  });

  it('requires Basic credentials (or, where allowed, a publishable key) with the organization header, and nothing on public routes', () => {
    expect(components.securitySchemes).toMatchObject({
      basicAuth: { type: 'http', scheme: 'basic' },
      organizationId: { type: 'apiKey', in: 'header', name: 'X-Service-Auth-Organization-Id' },
      publishableKey: { type: 'http', scheme: 'bearer' },
    });
    const secret = { basicAuth: [], organizationId: [] };
    for (const route of routes) {
      const expected = route.auth === 'secret' ? [secret] : route.auth === 'publishable-or-secret' ? [secret, { publishableKey: [], organizationId: [] }] : [];
      expect(operationOf(route).security, route.handler).toEqual(expected);
    }
    expect(routes.some((route) => route.auth === 'none')).toBe(true);
  });

  it('gives path parameters their prefixes as patterns', () => {
    for (const route of routes) {
      for (const parameter of parametersOf(operationOf(route)).filter((candidate) => candidate.in === 'path')) {
        const prefix = PATH_PARAMETER_PREFIXES[parameter.name as string];
        expect(prefix, `${route.handler}: ${String(parameter.name)} has no prefix in PATH_PARAMETER_PREFIXES`).toBeDefined();
        const pattern = new RegExp((parameter.schema as { pattern: string }).pattern);
        expect(pattern.source, route.handler).toBe(`^${prefix}[A-Za-z0-9_-]+$`);
        expect(pattern.test(parameter.example as string)).toBe(true);
        expect(pattern.test((parameter.example as string).slice(prefix!.length))).toBe(false);
      }
    }
  });

  it('lists the declared filters of list routes, plus filter, page_size, page_index and cursor; other routes only the parameters the route table names', () => {
    for (const route of routes) {
      const query = parametersOf(operationOf(route)).filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name);
      const filters = routeSchemas[route.handler]!.listFilters;
      // The route table marks the list routes the handlers check; the schemas give their filters: both must agree.
      expect(route.query === 'list', route.handler).toBe(filters !== undefined);
      const taken = route.query === undefined || route.query === 'list' ? [] : Object.keys(route.query);
      expect(query, route.handler).toEqual(filters ? [...Object.keys(filters), 'filter', 'page_size', 'page_index', 'cursor'] : taken);
    }
    expect(parametersOf(paths['/v3/js/tokenize.js']!.get!).map((parameter) => parameter.name)).toEqual(['v']);
    const documentsList = parametersOf(paths['/v3/organizations/{organization_id}/documents']!.get!);
    expect(documentsList.find((parameter) => parameter.name === 'type')?.schema).toEqual({ type: 'string', enum: ['jpeg', 'png', 'tiff', 'txt', 'bmp', 'wav', 'mp3'] });
    expect(documentsList.find((parameter) => parameter.name === 'page_size')?.schema).toEqual({ type: 'integer', minimum: 1, maximum: 1000, default: 50 });
  });

  it('takes Idempotency-Key on every POST, and only there', () => {
    for (const route of routes) {
      const headers = parametersOf(operationOf(route)).filter((parameter) => parameter.in === 'header').map((parameter) => parameter.name);
      expect(headers, route.handler).toEqual(route.method === 'POST' ? ['Idempotency-Key'] : []);
    }
  });

  it('describes JSON bodies with the closed validator schemas and the upload as multipart/form-data', () => {
    for (const route of routes) {
      const request = routeSchemas[route.handler]!.request;
      const body = operationOf(route).requestBody as { content: Record<string, { schema: JsonObject }> } | undefined;
      if (!request) {
        expect(body, route.handler).toBeUndefined();
        continue;
      }
      const mediaType = request.kind === 'json' ? 'application/json' : 'multipart/form-data';
      expect(Object.keys(body!.content), route.handler).toEqual([mediaType]);
    }
    for (const name of Object.keys(requestSchemas)) expect(components.schemas![name]?.additionalProperties, name).toBe(false);
    const create = components.schemas!.PaymethodCreate as { properties: Record<string, { properties: Record<string, JsonObject> }> };
    expect(create.properties.card!.properties.account_number).toMatchObject({ type: 'string', pattern: '^[0-9]{12,16}$' });
    expect(create.properties).toHaveProperty('vendors');
    expect(create.properties).not.toHaveProperty('organization_id');
    expect(components.schemas!.PaymethodCreateLocationless).toMatchObject({ required: ['organization_id'] });
    const upload = operationOf(routes.find((route) => route.handler === 'documents-create')!).requestBody as JsonObject;
    expect(upload).toMatchObject({
      content: { 'multipart/form-data': { schema: { properties: { metadata: { $ref: '#/components/schemas/DocumentUploadMetadata' }, file: { format: 'binary' } } } } },
    });
  });

  it('answers with a documented success status and the error statuses the route can give, in the ErrorEnvelope', () => {
    const expectations: Record<string, number[]> = {
      'paymethods-create-customer': [201, 400, 401, 403, 404, 409, 413, 415, 422, 429, 500, 503],
      'paymethods-update': [200, 400, 401, 403, 404, 409, 413, 415, 429, 500, 503],
      'paymethods-get': [200, 400, 401, 403, 404, 413, 429, 500, 503],
      'paymethods-list-location': [200, 400, 401, 403, 404, 413, 429, 500, 503],
      'documents-create': [201, 400, 401, 403, 404, 409, 413, 415, 422, 429, 500, 503],
      'documents-download': [302, 400, 401, 403, 404, 409, 413, 429, 500, 503],
      'tokenize-js': [200, 304, 400, 413, 429, 500, 503],
      'openapi-get': [200, 400, 413, 429, 500, 503],
    };
    for (const [handler, statuses] of Object.entries(expectations)) {
      const route = routes.find((candidate) => candidate.handler === handler)!;
      expect(Object.keys(operationOf(route).responses as JsonObject).map(Number), handler).toEqual(statuses);
    }
  });

  it('lists, for every error status, the response codes it can carry: catalogue codes of that status, every HTTP code somewhere', () => {
    const seen = new Set<string>();
    const check = (where: string, status: string, response: JsonObject) => {
      const resolved = resolveResponse(response);
      const schema = (resolved.content as Record<string, { schema: JsonObject }>)['application/json']!.schema;
      expect(schema.allOf, where).toEqual([{ $ref: '#/components/schemas/ErrorEnvelope' }]);
      const codes = ((schema.properties as JsonObject).response as { properties: { response_code: { enum: string[] } } }).properties.response_code.enum;
      expect(codes.length, where).toBeGreaterThan(0);
      for (const code of codes) {
        expect(isResponseCode(code) && statusOf(code), `${where}: ${code}`).toBe(Number(status));
        expect(resolved.description, where).toContain(`\`${code}\``);
        seen.add(code);
      }
      const headers = Object.keys(resolved.headers as JsonObject);
      expect(headers, where).toContain('X-Request-Id');
      if (status === '401') expect(headers, where).toContain('WWW-Authenticate');
      if (status === '405') expect(headers, where).toContain('Allow');
      if (status === '429' || status === '503') expect(headers, where).toContain('Retry-After');
    };
    for (const { method, path, operation } of operations()) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, JsonObject>)) {
        if (Number(status) >= 400) check(`${method} ${path} ${status}`, status, response);
      }
    }
    for (const [path, item] of Object.entries(paths)) {
      // Every path answers other methods with 405 and Allow (API Gateway's ANY mock method; the emulator alike).
      const any = item['x-amazon-apigateway-any-method'] as { responses: Record<string, JsonObject> };
      expect(Object.keys(any.responses), path).toEqual(['405']);
      check(`ANY ${path}`, '405', any.responses['405']!);
    }
    const apiCodes = ALL_RESPONSE_CODES.filter((code) => CODE_DETAILS[code].surface === 'api');
    expect(apiCodes.filter((code) => !seen.has(code)), 'catalogue codes no operation declares').toEqual([]);
    expect([...seen].filter((code) => !apiCodes.includes(code as ResponseCode)), 'declared codes that are not HTTP codes').toEqual([]);
  });

  it('declares the headers clients rely on: X-Request-Id on every answer, Location on creates and the redirect, Idempotent-Replayed on POSTs, ETag and 304 on the script', () => {
    for (const { method, path, operation } of operations()) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, JsonObject>)) {
        const headers = resolveResponse(response).headers as Record<string, JsonObject>;
        expect(headers['X-Request-Id'], `${method} ${path} ${status}`).toEqual({ $ref: '#/components/headers/X-Request-Id' });
        if (status === '201' || status === '302') expect(headers.Location, `${method} ${path} ${status}`).toMatchObject({ required: true });
        if (method === 'POST' && Number(status) < 500) expect(headers, `${method} ${path} ${status}`).toHaveProperty('Idempotent-Replayed');
        if (method !== 'POST') expect(headers, `${method} ${path} ${status}`).not.toHaveProperty('Idempotent-Replayed');
      }
    }
    expect(components.headers!['X-Request-Id']).toMatchObject({ required: true });
    const script = paths['/v3/js/tokenize.js']!.get!.responses as Record<string, JsonObject>;
    expect(script['304']).toMatchObject({ headers: { ETag: { required: true } } });
    expect(script['304']).not.toHaveProperty('content');
  });

  it('closes every answer schema: no object takes members it does not name, but the presigned POST form fields and the document itself', () => {
    const open: string[] = [];
    const walk = (node: unknown, where: string) => {
      if (Array.isArray(node)) return node.forEach((item, index) => walk(item, `${where}[${index}]`));
      if (typeof node !== 'object' || node === null) return;
      const schema = node as JsonObject;
      if (schema.type === 'object' && schema.additionalProperties !== false) open.push(where);
      for (const [key, value] of Object.entries(schema)) walk(value, `${where}/${key}`);
    };
    for (const [name, schema] of Object.entries(components.schemas!)) walk(schema, name);
    // S3 decides the presigned POST's fields; the OpenAPI document's own members are OpenAPI's to decide.
    expect(open).toEqual([
      'DocumentUploadSessionCreated/properties/upload/properties/fields',
      'OpenApiDocument',
      'OpenApiDocument/properties/info',
      'OpenApiDocument/properties/paths',
    ]);
  });

  it('refuses, through the document, an answer that carried an account number or any member it does not name', () => {
    const contract = new OpenApiContract(JSON.parse(serializeOpenApi(document)) as JsonObject);
    const link = 'https://api.example.com/v3/organizations/org_1/locations/loc_1/paymethods/mth_1';
    const paymethod = {
      paymethod_token: 'mth_1',
      location_id: 'loc_1',
      organization_id: 'org_1',
      is_default: 'false',
      card: { card_type: 'visa', name_on_card: 'Ann Lee', last_4_account_number: '1111', masked_account_number: '****1111', expire_month: 1, expire_year: 2030 },
      response: { environment: 'local', response_desc: 'Get Successful.' },
      links: { self: link, transactions: `${link}/transactions`, settlements: `${link}/settlements`, schedules: `${link}/schedules` },
    };
    const answer = (body: unknown) => ({
      method: 'GET',
      path: '/v3/organizations/org_1/locations/loc_1/paymethods/mth_1',
      status: 200,
      headers: new Headers({ 'X-Request-Id': 'r-1', 'Content-Type': 'application/json' }),
      text: JSON.stringify(body),
    });
    expect(contract.check(answer(paymethod))).toEqual({ operation: 'GET /v3/organizations/{organization_id}/locations/{location_id}/paymethods/{paymethod_token}', mismatches: [] });
    expect(contract.check(answer({ ...paymethod, card: { ...paymethod.card, account_number: '4111111111111111' } })).mismatches.join()).toMatch(/must NOT have additional properties/);
    expect(contract.check(answer({ ...paymethod, surprise: true })).mismatches).toHaveLength(1);
    expect(contract.check({ ...answer(paymethod), headers: new Headers({ 'Content-Type': 'application/json' }) }).mismatches.join()).toMatch(/required header X-Request-Id/);
    expect(contract.check({ ...answer(paymethod), status: 418 }).mismatches.join()).toMatch(/status 418 is not declared/);
  });

  it('is built from modules that load neither the AWS SDK nor the middleware stack, and the route table from none at all', async () => {
    const inputsOf = async (entry: string) => {
      const result = await build({
        entryPoints: [fileURLToPath(new URL(entry, import.meta.url))],
        bundle: true,
        write: false,
        metafile: true,
        platform: 'node',
        format: 'esm',
        logLevel: 'silent',
      });
      return Object.keys(result.metafile.inputs);
    };
    const generator = await inputsOf('../../shared/http/openapi.ts');
    expect(generator.filter((input) => /node_modules\/(@aws-sdk|@smithy|@aws-lambda-powertools|@middy)\//.test(input))).toEqual([]);
    expect(generator.filter((input) => /(^|\/)(functions|shared\/(aws|store|wiring))\//.test(input))).toEqual([]);
    expect(await inputsOf('../../shared/platform/routes.ts')).toEqual(['shared/platform/routes.ts']);
  });
});
