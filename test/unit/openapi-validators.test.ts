/**
 * docs/openapi.json through three independent OpenAPI validators, each with its
 * recommended rules: zero errors, and no warning but the ones accepted below.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import SwaggerParser from '@apidevtools/swagger-parser';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Document, Spectral } from '@stoplight/spectral-core';
import type { RulesetDefinition } from '@stoplight/spectral-core';
import Parsers from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import { describe, expect, it } from 'vitest';

const FILE = fileURLToPath(new URL('../../docs/openapi.json', import.meta.url));
const text = readFileSync(FILE, 'utf8');

const DOWNLOAD = '/paths/~1v3~1organizations~1{organization_id}~1documents~1{document_id}~1file/get/responses';

/**
 * Warnings we accept, each with why. Anything else (any error, any other
 * warning) fails the test.
 */
const ACCEPTED = {
  // The service is private to its operators: there is no public contact or licence to name, and inventing one
  // would mislead. A deployment that publishes the document adds its own.
  spectral: ['info-contact at info'],
  redocly: [
    'info-license at #/info',
    // The contract's download answers 302 to a presigned S3 URL and nothing else on success.
    `operation-2xx-response at #${DOWNLOAD}`,
  ],
};

describe('docs/openapi.json passes three independent validators', () => {
  it('swagger-parser validates it (OpenAPI 3.1 schema, $refs, parameters, operationIds)', async () => {
    await expect(SwaggerParser.validate(JSON.parse(text) as never)).resolves.toBeDefined();
  });

  it('swagger-parser refuses a server variable with a description, which is why the document gives none', async () => {
    const described = JSON.parse(text) as { servers: Array<{ variables: Record<string, Record<string, string>> }> };
    described.servers[0]!.variables.stage!.description = 'The environment.';
    await expect(SwaggerParser.validate(described as never)).rejects.toThrow(/variables\/stage/);
  });

  it('Spectral (the oas ruleset) finds no error and only the accepted warnings', async () => {
    const spectral = new Spectral();
    spectral.setRuleset(oas as RulesetDefinition);
    const results = await spectral.run(new Document(text, Parsers.Json, FILE));
    const found = results.map((result) => `${String(result.code)} at ${result.path.join('.') || '(root)'}${result.severity === 0 ? ' (error)' : ''}: ${result.message}`);
    expect(found.filter((line) => !ACCEPTED.spectral.some((accepted) => line.startsWith(`${accepted}:`)))).toEqual([]);
    for (const accepted of ACCEPTED.spectral) expect(found.some((line) => line.startsWith(`${accepted}:`)), `${accepted} no longer occurs: drop it from ACCEPTED`).toBe(true);
  }, 60_000);

  it('Redocly (the recommended ruleset) finds no error and only the accepted warnings', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: text, absoluteRef: FILE, config });
    const found = problems.map((problem) => `${problem.ruleId} at ${problem.location[0]?.pointer ?? '?'}${problem.severity === 'error' ? ' (error)' : ''}: ${problem.message}`);
    expect(found.filter((line) => !ACCEPTED.redocly.some((accepted) => line.startsWith(`${accepted}:`)))).toEqual([]);
    for (const accepted of ACCEPTED.redocly) expect(found.some((line) => line.startsWith(`${accepted}:`)), `${accepted} no longer occurs: drop it from ACCEPTED`).toBe(true);
  }, 60_000);

  it('would report what is wrong (a broken copy fails all three)', async () => {
    const broken = JSON.parse(text) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    broken.paths['/v3/openapi.json']!.get!.responses['200'] = { $ref: '#/components/responses/Nope' };
    const brokenText = JSON.stringify(broken);
    await expect(SwaggerParser.validate(JSON.parse(brokenText) as never)).rejects.toThrow();
    const spectral = new Spectral();
    spectral.setRuleset(oas as RulesetDefinition);
    expect((await spectral.run(new Document(brokenText, Parsers.Json, FILE))).filter((result) => result.severity === 0)).not.toEqual([]);
    const problems = await lintFromString({ source: brokenText, absoluteRef: FILE, config: await createConfig({ extends: ['recommended'] }) });
    expect(problems.filter((problem) => problem.severity === 'error')).not.toEqual([]);
  }, 60_000);
});
