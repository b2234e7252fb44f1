import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import * as z from 'zod/mini';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '#shared/http/openapi.ts';
import { curlSample, openApiDocument } from '#shared/http/openapi.ts';
import type { RouteSchemas } from '#shared/http/route-schemas.ts';
import { routeSchemas } from '#shared/http/route-schemas.ts';
import { routes } from '#shared/platform/routes.ts';

/**
 * The reference's examples: every operation with a JSON body or a JSON answer
 * has one of each, next to its schemas in route-schemas.ts, and each is valid
 * against the schema the code uses and the one the document publishes.
 */
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const document = openApiDocument();
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
ajv.addFormat('binary', true);
ajv.addSchema({ ...document, $id: 'openapi' });
const pointer = (...segments: string[]) => segments.map((segment) => encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');
const operationOf = (route: (typeof routes)[number]) => (document.paths as Record<string, Record<string, JsonObject>>)[route.path]![route.method.toLowerCase()]!;

/** What is missing from an entry's examples: the test below fails on any route that has a JSON body or answer and no example of it. */
export function missingExamples(entry: RouteSchemas): string[] {
  return [
    ...(entry.request && entry.examples.request === undefined ? ['request'] : []),
    ...(entry.response.schema && entry.examples.response === undefined ? ['response'] : []),
  ];
}

describe('the examples of every operation', () => {
  it.each(routes.map((route) => [route.handler, route] as const))('%s: has one request and one answer where it takes and gives JSON, each valid', (handler, route) => {
    const entry = routeSchemas[handler]!;
    expect(missingExamples(entry)).toEqual([]);
    const operation = operationOf(route);
    if (entry.request?.kind === 'json') {
      const parsed = z.safeParse(entry.request.schema, entry.examples.request);
      expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
      const published = ajv.validate({ $ref: `openapi#/${pointer('paths', route.path, route.method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema')}` }, entry.examples.request);
      expect(published, ajv.errorsText()).toBe(true);
      expect(((operation.requestBody as JsonObject).content as Record<string, JsonObject>)['application/json']!.example).toEqual(entry.examples.request);
    }
    if (entry.request?.kind === 'multipart') {
      const example = entry.examples.request as { metadata: unknown; file: unknown };
      expect(z.safeParse(entry.request.metadata, example.metadata).success).toBe(true);
      expect(typeof example.file).toBe('string');
    }
    if (entry.response.schema) {
      const parsed = z.safeParse(entry.response.schema, entry.examples.response);
      expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
      const status = String(entry.response.status);
      const published = ajv.validate({ $ref: `openapi#/${pointer('paths', route.path, route.method.toLowerCase(), 'responses', status, 'content', 'application/json', 'schema')}` }, entry.examples.response);
      expect(published, ajv.errorsText()).toBe(true);
      expect((((operation.responses as Record<string, JsonObject>)[status]!.content as Record<string, JsonObject>)['application/json']!).example).toEqual(entry.examples.response);
    }
  });

  it('an entry without the example of its body or answer is found out', () => {
    const entry = routeSchemas['paymethods-create-customer']!;
    expect(missingExamples({ ...entry, examples: {} })).toEqual(['request', 'response']);
    expect(missingExamples({ ...entry, examples: { request: entry.examples.request } })).toEqual(['response']);
    // And an example the published schema does not take fails: an answer never carries an account number.
    const answer = entry.examples.response as { card: object };
    const schema = { $ref: `openapi#/${pointer('paths', '/v3/organizations/{organization_id}/locations/{location_id}/customers/{customer_token}/paymethods', 'post', 'responses', '201', 'content', 'application/json', 'schema')}` };
    expect(ajv.validate(schema, answer)).toBe(true);
    expect(ajv.validate(schema, { ...answer, card: { ...answer.card, account_number: '4111111111111111' } })).toBe(false);
  });

  it('each operation has a one-line summary and a curl sample for its method, path and body', () => {
    for (const route of routes) {
      const operation = operationOf(route);
      // One line, as a reference's table of contents shows it: what it does; the rest is the description's.
      expect(operation.summary, route.handler).not.toMatch(/\n/);
      expect((operation.summary as string).length, route.handler).toBeLessThanOrEqual(45);
      const [sample] = operation['x-codeSamples'] as Array<{ lang: string; label: string; source: string }>;
      expect(sample).toMatchObject({ lang: 'Shell', label: 'curl' });
      expect(sample!.source).toBe(curlSample(route, routeSchemas[route.handler]!));
      expect(sample!.source).toMatch(new RegExp(`^curl -s${route.method === 'GET' ? '' : ` -X ${route.method}`} "\\$BASE/v3/`));
      expect(sample!.source).not.toMatch(/\{\w+\}/);
    }
  });

  it('the document upload describes its file part as binary, beside a JSON part', () => {
    const route = routes.find((candidate) => candidate.handler === 'documents-create')!;
    const multipart = ((operationOf(route).requestBody as JsonObject).content as Record<string, JsonObject>)['multipart/form-data']!;
    const properties = (multipart.schema as { properties: Record<string, JsonObject> }).properties;
    expect(properties.file).toMatchObject({ type: 'string', format: 'binary', contentMediaType: 'application/octet-stream' });
    expect((multipart.encoding as Record<string, JsonObject>).metadata).toEqual({ contentType: 'application/json' });
    expect(multipart.example).toEqual(routeSchemas['documents-create']!.examples.request);
  });

  it('the curl samples are valid shell, and send the example body as it is', async () => {
    const run = promisify(execFile);
    const dir = await mkdtemp(path.join(tmpdir(), 'curl-samples-'));
    try {
      for (const route of routes) {
        const entry = routeSchemas[route.handler]!;
        // curl prints its arguments instead of sending them: the shell's quoting is what is checked.
        const script = `curl() { printf '%s\\n' "$@"; }; uuidgen() { echo 00000000-0000-4000-8000-000000000000; }\n${curlSample(route, entry)}`;
        await writeFile(path.join(dir, 'receipt.txt'), 'Receipt 1001: 12.50 USD\n');
        const { stdout } = await run('bash', ['--norc', '-euo', 'pipefail', '-c', script], { cwd: dir, env: { PATH: process.env.PATH, BASE: 'https://api.example', AUTH: 'ak:sk' } });
        const args = stdout.trimEnd().split('\n');
        if (entry.request?.kind === 'json') expect(JSON.parse(args[args.indexOf('-d') + 1]!)).toEqual(entry.examples.request);
        expect(args.find((arg) => arg.startsWith('https://')), route.handler).toMatch(/^https:\/\/api\.example\/v3\/[a-z]/);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
