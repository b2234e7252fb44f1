/**
 * The operator's documentation states counts a reader plans with (routes,
 * indexes, keys, outputs); they are compared here with the template
 * `cdk deploy` would create, so a change that adds one fails until the docs say so.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ANSWER_MARGIN_MS, ANSWER_WITHIN_MS, API_FUNCTION_TIMEOUT_SECONDS, AUTHORIZER_BUDGET_MS, REQUEST_BUDGET_MS } from '#shared/platform/function-sizing.ts';
import { API_GATEWAY_TIMEOUT_MS, routes } from '#shared/platform/routes.ts';
import { fileURLToPath } from 'node:url';
import { API_ENDPOINT_ACCESS_MODE, API_SECURITY_POLICY } from '#infra/api.ts';
import { DEFAULT_WEB_ACL, MINIMUM_S3_TLS_VERSION } from '#infra/environments.ts';
import { BODY_RULES_EXCEPT_UPLOADS, COUNTED_ONLY, WAF_REDACTED_HEADERS } from '#infra/waf.ts';
import { MAX_FILE_BYTES } from '#shared/domain/documents/document.ts';
import { fixtureRoutes } from './fixtures/routes.ts';
import { paymethodTableRef, resourcesOfType, settings, synthesize } from './template-helpers.ts';

const functionsDir = fileURLToPath(new URL('./fixtures/functions', import.meta.url));

const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const decisions = readFileSync(new URL('../../docs/api-decisions.md', import.meta.url), 'utf8');

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

describe('the request deadline as the docs state it', () => {
  const seconds = (ms: number) => ms / 1000;

  it('states the deadline from arrival, the authorizer cap, the margin and the function timeout the code uses', () => {
    expect(operations).toContain(`one request deadline, ${seconds(REQUEST_BUDGET_MS)} s after API Gateway received the request`);
    expect(operations).toContain(`An uncached authorizer call stops at ${seconds(AUTHORIZER_BUDGET_MS)} s of it at most`);
    expect(operations).toContain(`the same ${seconds(REQUEST_BUDGET_MS)} s instead of adding to separate budgets`);
    expect(operations).toContain(`the last second is left for shaping the 503`);
    expect(ANSWER_WITHIN_MS - REQUEST_BUDGET_MS).toBe(1_000);
    expect(operations).toContain(`functions time out at ${API_FUNCTION_TIMEOUT_SECONDS} s`);
    expect(operations).toContain(`at most ${seconds(REQUEST_BUDGET_MS)} s into an invocation and always ${seconds(ANSWER_MARGIN_MS)} s before its timeout`);
    expect(operations).toContain(`Integration timeout ${seconds(API_GATEWAY_TIMEOUT_MS)} s`);
    expect(decisions).toContain(`one deadline, ${seconds(REQUEST_BUDGET_MS)} s after its arrival at API Gateway`);
    expect(decisions).toContain(`uncached authorizer call (${seconds(AUTHORIZER_BUDGET_MS)} s of it at most)`);
    expect(decisions).toContain(`functions time out at ${API_FUNCTION_TIMEOUT_SECONDS} s`);
  });

  it('orders them: the deadline, then the contract, then the function timeout, then the integration timeout', () => {
    expect(AUTHORIZER_BUDGET_MS).toBeLessThan(REQUEST_BUDGET_MS);
    expect(REQUEST_BUDGET_MS).toBeLessThan(ANSWER_WITHIN_MS);
    expect(REQUEST_BUDGET_MS + ANSWER_MARGIN_MS).toBeLessThanOrEqual(API_FUNCTION_TIMEOUT_SECONDS * 1000);
    expect(API_FUNCTION_TIMEOUT_SECONDS * 1000).toBeLessThan(API_GATEWAY_TIMEOUT_MS);
  });
});

describe('the web ACL and TLS as docs/operations.md states them', () => {
  const template = synthesize(settings('prod'), { routes: fixtureRoutes, functionsDir, s3Triggers: [] });
  const [acl] = Object.values(resourcesOfType(template, 'AWS::WAFv2::WebACL'));
  const rules = (acl!.Properties.Rules as Array<{ Name: string; Priority: number }>).toSorted((a, b) => a.Priority - b.Priority);
  const section = operations.slice(operations.indexOf('## Web ACL and TLS'), operations.indexOf('## Request size limits'));

  it('counts and orders the rules as the template has them', () => {
    expect(section).toContain(`Its ${rules.length} rules, in order:`);
    for (const { Name, Priority } of rules) expect(section).toContain(`| ${Priority} | \`${Name}\` |`);
    expect(section).toContain(`$1 per rule ($${5 + rules.length})`);
    expect(operations).toContain(`($5 and $1 per rule: $${5 + rules.length})`);
  });

  it('states the default rate rule, the log group, the redacted header and the TLS policy the code uses', () => {
    expect(operations).toContain(`on: ${DEFAULT_WEB_ACL.rateLimit} requests per address per ${DEFAULT_WEB_ACL.evaluationWindowSeconds} s`);
    expect(section).toContain('`aws-waf-logs-payments-api-<environment>`');
    expect(section).toContain('with the `Authorization` header redacted');
    expect(WAF_REDACTED_HEADERS).toEqual(['authorization']);
    for (const rule of [...BODY_RULES_EXCEPT_UPLOADS, ...COUNTED_ONLY]) expect(section).toContain(`\`${rule}\``);
    expect(section).toContain(`\`${API_SECURITY_POLICY}\` with endpoint access mode \`${API_ENDPOINT_ACCESS_MODE}\``);
    expect(operations).toContain(`--security-policy ${API_SECURITY_POLICY} --endpoint-access-mode ${API_ENDPOINT_ACCESS_MODE}`);
    expect(section).toContain(`TLS older than ${MINIMUM_S3_TLS_VERSION}`);
  });

  it('docs/vault.md names the same policy, access mode and log group where it says how 4.2.1 and 6.4.2 are met', () => {
    const vault = readFileSync(new URL('../../docs/vault.md', import.meta.url), 'utf8');
    const edge = vault.slice(vault.indexOf('## PCI DSS v4.0.1 requirements this service touches'));
    expect(edge).toContain(`security policy \`${API_SECURITY_POLICY}\`, endpoint access mode \`${API_ENDPOINT_ACCESS_MODE}\``);
    expect(edge).toContain(`TLS older than ${MINIMUM_S3_TLS_VERSION}`);
    expect(edge).toContain('`aws-waf-logs-payments-api-<environment>` with the `Authorization` header redacted');
    for (const file of ['infra/api.ts', 'infra/waf.ts', 'infra/environments.ts']) expect(edge).toContain(`\`${file}\``);
  });

  it('states the largest upload, which only presigned POSTs carry', () => {
    expect(section).toContain(`Uploads up to\n${MAX_FILE_BYTES.toLocaleString('en-US')} bytes go through presigned S3 POSTs`);
  });
});
