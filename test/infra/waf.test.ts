import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { fixtureRoutes } from './fixtures/routes.ts';
import { resourcesOfType, settings, synthesize } from './template-helpers.ts';

const functionsDir = fileURLToPath(new URL('./fixtures/functions', import.meta.url));

describe('optional WAF rate-based rule', () => {
  // One synthesis per test: both environments leave the setting unset in cdk.json.
  it('is absent by default', () => {
    const template = synthesize(settings('dev'), { routes: fixtureRoutes, functionsDir, s3Triggers: [] });
    template.resourceCountIs('AWS::WAFv2::WebACL', 0);
    template.hasOutput('RestApiId', {});
    template.hasOutput('StageName', {});
  });

  it('when set, blocks a source address past the limit with 429 in the envelope, on the stage', () => {
    const template = synthesize(settings('dev', { wafRateLimit: { limit: 2000, evaluationWindowSeconds: 300 } }), { routes: fixtureRoutes, functionsDir, s3Triggers: [] });
    const [acl] = Object.values(resourcesOfType(template, 'AWS::WAFv2::WebACL'));
    type Rule = { Statement: { RateBasedStatement: unknown }; Action: { Block: { CustomResponse: unknown } } };
    const rule = (acl!.Properties.Rules as Rule[])[0]!;
    expect(rule.Statement.RateBasedStatement).toEqual({ AggregateKeyType: 'IP', Limit: 2000, EvaluationWindowSec: 300 });
    expect(rule.Action.Block.CustomResponse).toMatchObject({ ResponseCode: 429, ResponseHeaders: [{ Name: 'Retry-After', Value: '300' }] });
    const body = (acl!.Properties.CustomResponseBodies as Record<string, { Content: string }>).throttled!.Content;
    expect(JSON.parse(body).response).toMatchObject({ response_code: 'THROTTLED', environment: 'sandbox' });
    template.resourceCountIs('AWS::WAFv2::WebACLAssociation', 1);
  });
});
