import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '#shared/platform/routes.ts';
import { bundlingDefinesFor } from '#infra/bundled-assets.ts';
import { bundleTokenizeScriptSync } from '../../client/build.ts';
import { AUTHORIZER_CACHE_TTL_SECONDS } from '#shared/platform/names.ts';
import { actionsOf, findMethod, integrationFunctionId, keyIdByDescription, resourcesOfType, roleStatements, settings, synthesize } from './template-helpers.ts';

const SYNTH_TIMEOUT_MS = 60_000;
const MINT = '/v3/organizations/{organization_id}/locations/{location_id}/onetimetokens';
const SCRIPT = '/v3/js/tokenize.js';
const LOGS = ['logs:CreateLogStream', 'logs:PutLogEvents', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments'];
const READ = ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'];
const WRITE = [...READ, 'dynamodb:ConditionCheckItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'];

type Properties = Record<string, unknown>;

describe('client-side tokenization in the stack (real route table)', () => {
  let template: Template;
  beforeAll(() => {
    template = synthesize(settings('prod'));
  }, SYNTH_TIMEOUT_MS);

  it('has two REQUEST authorizers on the same function: secret, and publishable-or-secret', () => {
    const authorizers = Object.entries(resourcesOfType(template, 'AWS::ApiGateway::Authorizer'));
    expect(authorizers).toHaveLength(2);
    const identity = 'method.request.header.Authorization,context.identity.sourceIp';
    for (const [, authorizer] of authorizers) {
      expect(authorizer.Properties).toMatchObject({ Type: 'REQUEST', IdentitySource: identity, AuthorizerResultTtlInSeconds: AUTHORIZER_CACHE_TTL_SECONDS });
    }
    const uris = authorizers.map(([, authorizer]) => JSON.stringify(authorizer.Properties.AuthorizerUri));
    expect(uris[0]).toBe(uris[1]);
    // Each authorizer may invoke the function: one permission per authorizer.
    const permissions = Object.values(resourcesOfType(template, 'AWS::Lambda::Permission')).filter((permission) =>
      JSON.stringify(permission.Properties.SourceArn).includes('/authorizers/'),
    );
    expect(permissions).toHaveLength(2);
  });

  it('puts minting behind the publishable-key authorizer and every other authenticated route behind the secret one', () => {
    const publishable = authorizers(template).find(([id]) => id.includes('PublishableKeyAuthorizer'));
    const secret = authorizers(template).find(([id]) => !id.includes('PublishableKeyAuthorizer'));
    expect(publishable && secret).toBeTruthy();
    for (const route of routes) {
      const method = findMethod(template, route.path, route.method)!;
      if (route.auth === 'none') expect(method).toMatchObject({ AuthorizationType: 'NONE' });
      else expect(method).toMatchObject({ AuthorizationType: 'CUSTOM', AuthorizerId: { Ref: (route.auth === 'secret' ? secret : publishable)![0] } });
    }
    expect(findMethod(template, MINT, 'POST')!.AuthorizerId).toEqual({ Ref: publishable![0] });
  });

  it('answers the CORS preflight on the minting route with its own function, reading the table and nothing more', () => {
    const preflight = findMethod(template, MINT, 'OPTIONS');
    expect(preflight).toMatchObject({ AuthorizationType: 'NONE', Integration: { Type: 'AWS_PROXY' } });
    const fn = integrationFunctionId(template, preflight!);
    expect(actionsOf(roleStatements(template, fn))).toEqual([...LOGS, ...READ].sort());
    // The location's keys are found through gsi1: Query is granted on each index by name.
    const indexStatement = roleStatements(template, fn).find((statement) => JSON.stringify(statement.Resource).includes('/index/'))!;
    expect([indexStatement.Action].flat()).toEqual(['dynamodb:Query']);
    expect(JSON.stringify(indexStatement.Resource)).toContain('/index/gsi1');
    expect(JSON.stringify(indexStatement.Resource)).not.toContain('/index/*');
  });

  it('offers no preflight and no CORS header anywhere else', () => {
    const options = Object.values(resourcesOfType(template, 'AWS::ApiGateway::Method')).filter((method) => method.Properties.HttpMethod === 'OPTIONS');
    expect(options).toHaveLength(1);
    // Gateway responses and mock integrations (401, 403, 404, 405, 429, 5xx) carry no CORS headers.
    expect(JSON.stringify(template.toJSON())).not.toMatch(/Access-Control-/i);
  });

  it('lets the minting function count attempts (table write), seal numbers and hash its Idempotency-Key requests, never open a number', () => {
    const fn = integrationFunctionId(template, findMethod(template, MINT, 'POST')!);
    // GenerateMac: the keyed request hash, on the request-hash key only (shared/platform/key-grants.ts); the mint computes no fingerprint (docs/vault.md).
    const statements = roleStatements(template, fn);
    expect(actionsOf(statements)).toEqual([...LOGS, ...WRITE, 'kms:GenerateDataKey', 'kms:GenerateMac'].sort());
    const macKeys = statements.filter((statement) => actionsOf([statement]).includes('kms:GenerateMac')).flatMap((statement) => [statement.Resource].flat());
    expect(macKeys).toEqual([{ 'Fn::GetAtt': [keyIdByDescription(template, 'Idempotency-Key requests'), 'Arn'] }]);
  });

  it('serves the library from a public GET whose function touches no data', () => {
    const method = findMethod(template, SCRIPT, 'GET');
    expect(method).toMatchObject({ AuthorizationType: 'NONE', Integration: { Type: 'AWS_PROXY' } });
    const fn = integrationFunctionId(template, method!);
    expect(actionsOf(roleStatements(template, fn))).toEqual(LOGS);
  });

  it('inlines the built library into the serving function only', () => {
    const scriptRoute = routes.find((route) => route.path === SCRIPT)!;
    const defines = bundlingDefinesFor(scriptRoute)!;
    expect(Object.keys(defines)).toEqual(['__TOKENIZE_SCRIPT__']);
    const inlined = JSON.parse(defines.__TOKENIZE_SCRIPT__!) as string;
    expect(inlined).toBe(bundleTokenizeScriptSync());
    expect(inlined).toMatch(/export\s*\{/);
    for (const route of routes.filter((candidate) => candidate !== scriptRoute)) expect(Object.keys(bundlingDefinesFor(route) ?? {})).not.toContain('__TOKENIZE_SCRIPT__');
  });
});

function authorizers(template: Template): Array<[string, Properties]> {
  return Object.entries(resourcesOfType(template, 'AWS::ApiGateway::Authorizer')).map(([id, resource]) => [id, resource.Properties]);
}
