/**
 * The operator's documentation states counts a reader plans with (routes,
 * indexes, keys, outputs); they are compared here with the template
 * `cdk deploy` would create, so a change that adds one fails until the docs say so.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { routes } from '#shared/http/routes.ts';
import { paymethodTableRef, resourcesOfType, settings, synthesize } from './template-helpers.ts';

const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The value cell of a row of the "at a glance" table, by the row's label (its first cell, starting with `label`). */
function glanceRow(label: string): string {
  const row = operations.split('\n').find((line) => line.startsWith(`| ${label}`));
  if (!row) throw new Error(`docs/operations.md has no "| ${label}" row`);
  const cells = row.split('|').map((cell) => cell.trim());
  return cells[2]!;
}

describe('docs/operations.md and the README against the synthesized template', () => {
  const template = synthesize(settings('dev'));
  const table = resourcesOfType(template, 'AWS::DynamoDB::Table')[paymethodTableRef(template).Ref]!;
  const indexCount = (table.Properties.GlobalSecondaryIndexes as unknown[]).length;

  it('counts the routes of the route table, each a method of the API (the ANY methods are the 404/405 mocks)', () => {
    expect(Number(glanceRow('Routes'))).toBe(routes.length);
    const routeMethods = Object.values(resourcesOfType(template, 'AWS::ApiGateway::Method')).filter((method) => method.Properties.HttpMethod !== 'ANY');
    expect(routeMethods).toHaveLength(routes.length);
  });

  it('counts the global secondary indexes, in the operations guide and the README diagram', () => {
    expect(Number(glanceRow('Global secondary indexes'))).toBe(indexCount);
    expect(readme).toContain(`pk/sk + ${indexCount} GSIs`);
  });

  it('counts the KMS keys, and prices them', () => {
    const keys = Object.keys(resourcesOfType(template, 'AWS::KMS::Key')).length;
    expect(Number(glanceRow('KMS keys'))).toBe(keys);
    expect(operations).toContain(`${keys} KMS keys ($${keys})`);
  });

  it('lists exactly the stack outputs the CLIs read', () => {
    const documented = glanceRow('Stack outputs').split(',').map((name) => name.trim()).sort();
    expect(documented).toEqual(Object.keys(template.toJSON().Outputs as object).sort());
  });
});
