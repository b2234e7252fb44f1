import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '#shared/http/openapi.ts';
import { openApiDocument, routesWithoutSchemas, serializeOpenApi } from '#shared/http/openapi.ts';
import { requestSchemas, responseSchemas, routeSchemas } from '#shared/http/route-schemas.ts';
import type { RouteDefinition } from '#shared/http/routes.ts';
import { PATH_PARAMETER_PREFIXES, routes } from '#shared/http/routes.ts';
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
    expect((document.servers as JsonObject[]).map((server) => server.url)).toEqual([
      'http://localhost:3000',
      'https://{apiId}.execute-api.{region}.amazonaws.com/{stage}',
    ]);
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

  it('lists the declared filters of list routes, plus filter, page_size, page_index and cursor; other routes take no query', () => {
    for (const route of routes) {
      const query = parametersOf(operationOf(route)).filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name);
      const filters = routeSchemas[route.handler]!.listFilters;
      expect(query, route.handler).toEqual(filters ? [...Object.keys(filters), 'filter', 'page_size', 'page_index', 'cursor'] : []);
    }
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
      'paymethods-get': [200, 401, 403, 404, 413, 429, 500, 503],
      'paymethods-list-location': [200, 400, 401, 403, 404, 413, 429, 500, 503],
      'documents-create': [201, 400, 401, 403, 404, 409, 413, 415, 422, 429, 500, 503],
      'documents-download': [302, 401, 403, 404, 409, 413, 429, 500, 503],
      'openapi-get': [200, 413, 429, 500, 503],
    };
    for (const [handler, statuses] of Object.entries(expectations)) {
      const route = routes.find((candidate) => candidate.handler === handler)!;
      expect(Object.keys(operationOf(route).responses as JsonObject).map(Number), handler).toEqual(statuses);
    }
    for (const route of routes) {
      for (const [status, response] of Object.entries(operationOf(route).responses as Record<string, JsonObject>)) {
        if (Number(status) < 400) continue;
        const resolved = typeof response.$ref === 'string' ? components.responses![response.$ref.split('/').pop() as string]! : response;
        expect(resolved.content, `${route.handler} ${status}`).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } });
      }
    }
    expect(components.responses!.Unauthorized!.headers).toHaveProperty('WWW-Authenticate');
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
    expect(await inputsOf('../../shared/http/routes.ts')).toEqual(['shared/http/routes.ts']);
  });
});
