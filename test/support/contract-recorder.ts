/**
 * The contract check of the integration suite (a vitest setup file): every
 * answer a test receives from the service through fetch (whichever helper made
 * the request, whichever local runtime answered) is checked against
 * docs/openapi.json (see openapi-contract.ts). Mismatches are collected and
 * fail the test file in afterAll, listed; what was seen (operation x status)
 * is written to test-output/contract/ and summed up by the global teardown
 * (contract-coverage.ts).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, expect } from 'vitest';
import { OpenApiContract } from './openapi-contract.ts';

export const CONTRACT_OUTPUT_DIR = path.resolve(import.meta.dirname, '../../test-output/contract');

const contract = OpenApiContract.fromFile(new URL('../../docs/openapi.json', import.meta.url));
const mismatches: string[] = [];
const seen: Record<string, Record<string, number>> = {};
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const realFetch = globalThis.fetch;

globalThis.fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const response = await realFetch(input, init);
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (!LOCAL_HOSTS.has(url.hostname) || !url.pathname.startsWith('/v3/')) return response;
  const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
  const text = await response.clone().text();
  const result = contract.check({ method, path: url.pathname, status: response.status, headers: response.headers, text });
  const operation = result.operation ?? `${method} (no documented path)`;
  seen[operation] ??= {};
  seen[operation][response.status] = (seen[operation][response.status] ?? 0) + 1;
  mismatches.push(...result.mismatches);
  return response;
};

afterAll(() => {
  mkdirSync(CONTRACT_OUTPUT_DIR, { recursive: true });
  writeFileSync(path.join(CONTRACT_OUTPUT_DIR, `${randomUUID()}.json`), JSON.stringify({ seen, mismatches }));
  expect(mismatches, 'answers that do not match docs/openapi.json').toEqual([]);
});
