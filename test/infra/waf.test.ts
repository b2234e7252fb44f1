import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { API_ENDPOINT_ACCESS_MODE, API_SECURITY_POLICY } from '#infra/api.ts';
import { DEFAULT_WEB_ACL, environmentSettings, MINIMUM_S3_TLS_VERSION } from '#infra/environments.ts';
import { BODY_RULES_EXCEPT_UPLOADS, COUNTED_ONLY, uploadPathPattern, WAF_REDACTED_HEADERS } from '#infra/waf.ts';
import { routes } from '#shared/platform/routes.ts';
import { fixtureRoutes } from './fixtures/routes.ts';
import { resourcesOfType, settings, synthesize } from './template-helpers.ts';

const functionsDir = fileURLToPath(new URL('./fixtures/functions', import.meta.url));
const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: { environments: Record<string, Record<string, unknown>> } };
const rawSettings = (name: string) => cdkJson.context.environments[name]!;

type Statement = Record<string, unknown>;
interface Rule {
  Name: string;
  Priority: number;
  Statement: Statement;
  Action?: Record<string, { CustomResponse?: { ResponseCode: number; CustomResponseBodyKey: string; ResponseHeaders?: unknown[] } }>;
  OverrideAction?: Record<string, unknown>;
}

describe('the prod web ACL, from the synthesized template', () => {
  // The real route table: the upload exception is derived from it.
  const template = synthesize(settings('prod'));
  const [aclId, acl] = Object.entries(resourcesOfType(template, 'AWS::WAFv2::WebACL'))[0]!;
  const rules = (acl.Properties.Rules as Rule[]).toSorted((a, b) => a.Priority - b.Priority);
  const ruleNamed = (name: string) => rules.find((rule) => rule.Name === name)!;

  it('exists by default, one, regional, allowing what no rule blocks', () => {
    template.resourceCountIs('AWS::WAFv2::WebACL', 1);
    expect(acl.Properties).toMatchObject({ Scope: 'REGIONAL', DefaultAction: { Allow: {} } });
  });

  it('runs the IP reputation list, the rate rule, known bad inputs, the core rule set and the body rule, in that order', () => {
    expect(rules.map((rule) => rule.Name)).toEqual([
      'AWSManagedRulesAmazonIpReputationList',
      'rate-per-source-address',
      'AWSManagedRulesKnownBadInputsRuleSet',
      'AWSManagedRulesCommonRuleSet',
      'body-rules-except-uploads',
    ]);
    for (const name of ['AWSManagedRulesAmazonIpReputationList', 'AWSManagedRulesKnownBadInputsRuleSet', 'AWSManagedRulesCommonRuleSet']) {
      const rule = ruleNamed(name);
      expect(rule.Statement.ManagedRuleGroupStatement, name).toMatchObject({ VendorName: 'AWS', Name: name });
      // None: the group's own actions (block) apply; Count would only watch.
      expect(rule.OverrideAction, name).toEqual({ None: {} });
    }
  });

  it('blocks a source address past the rate limit with 429 in the envelope and Retry-After', () => {
    const rule = ruleNamed('rate-per-source-address');
    expect(rule.Statement.RateBasedStatement).toEqual({ AggregateKeyType: 'IP', Limit: DEFAULT_WEB_ACL.rateLimit, EvaluationWindowSec: DEFAULT_WEB_ACL.evaluationWindowSeconds });
    expect(rule.Action!.Block!.CustomResponse).toMatchObject({ ResponseCode: 429, ResponseHeaders: [{ Name: 'Retry-After', Value: String(DEFAULT_WEB_ACL.evaluationWindowSeconds) }] });
    const bodies = acl.Properties.CustomResponseBodies as Record<string, { Content: string }>;
    expect(JSON.parse(bodies.throttled!.Content).response).toMatchObject({ response_code: 'THROTTLED', environment: 'live' });
    expect(JSON.parse(bodies.forbidden!.Content).response).toMatchObject({ response_code: 'FORBIDDEN', environment: 'live' });
  });

  it('only counts the core rule set body rules and NoUserAgent, and blocks the body rules everywhere but on POST to the upload route', () => {
    const overrides = (ruleNamed('AWSManagedRulesCommonRuleSet').Statement.ManagedRuleGroupStatement as { RuleActionOverrides: Array<{ Name: string; ActionToUse: unknown }> }).RuleActionOverrides;
    expect(overrides).toEqual([...BODY_RULES_EXCEPT_UPLOADS, ...COUNTED_ONLY].map((name) => ({ Name: name, ActionToUse: { Count: {} } })));
    expect(BODY_RULES_EXCEPT_UPLOADS).toEqual(['SizeRestrictions_BODY', 'CrossSiteScripting_BODY', 'GenericRFI_BODY']);

    const bodyRule = ruleNamed('body-rules-except-uploads');
    expect(bodyRule.Action!.Block!.CustomResponse).toMatchObject({ ResponseCode: 403, CustomResponseBodyKey: 'forbidden' });
    const [labels, notUpload] = (bodyRule.Statement.AndStatement as { Statements: Statement[] }).Statements as [Statement, Statement];
    expect(labels).toEqual({
      OrStatement: {
        Statements: ['SizeRestrictions_Body', 'CrossSiteScripting_Body', 'GenericRFI_Body'].map((label) => ({ LabelMatchStatement: { Scope: 'LABEL', Key: `awswaf:managed:aws:core-rule-set:${label}` } })),
      },
    });
    const [method, uriPath] = ((notUpload.NotStatement as { Statement: { AndStatement: { Statements: Statement[] } } }).Statement.AndStatement.Statements) as [Statement, Statement];
    expect(method.ByteMatchStatement).toMatchObject({ FieldToMatch: { Method: {} }, PositionalConstraint: 'EXACTLY', SearchString: 'POST' });
    const regex = (uriPath.RegexMatchStatement as { FieldToMatch: unknown; RegexString: string });
    expect(regex.FieldToMatch).toEqual({ UriPath: {} });
    expect(regex.RegexString).toBe(uploadPathPattern(routes.filter((route) => route.binaryBody)));
  });

  it('is associated with the stage', () => {
    const [association] = Object.values(resourcesOfType(template, 'AWS::WAFv2::WebACLAssociation'));
    expect(association!.Properties.WebACLArn).toEqual({ 'Fn::GetAtt': [aclId, 'Arn'] });
    const [stageId] = Object.keys(resourcesOfType(template, 'AWS::ApiGateway::Stage'));
    expect(JSON.stringify(association!.Properties.ResourceArn)).toContain(`"Ref":"${stageId}"`);
  });

  it('logs every request to an aws-waf-logs- group kept as long as the other logs, with the Authorization header redacted', () => {
    const [logging] = Object.values(resourcesOfType(template, 'AWS::WAFv2::LoggingConfiguration'));
    expect(logging!.Properties.ResourceArn).toEqual({ 'Fn::GetAtt': [aclId, 'Arn'] });
    expect(logging!.Properties.RedactedFields).toEqual([{ SingleHeader: { Name: 'authorization' } }]);
    expect(WAF_REDACTED_HEADERS).toContain('authorization');
    expect(logging!.Properties.LoggingFilter).toBeUndefined(); // every request, not only the blocked ones
    const destination = JSON.stringify(logging!.Properties.LogDestinationConfigs);
    expect(destination).toContain(':log-group:');
    expect(destination).not.toContain(':*');
    const groups = Object.entries(resourcesOfType(template, 'AWS::Logs::LogGroup')).filter(([, group]) => String(group.Properties.LogGroupName).startsWith('aws-waf-logs-'));
    expect(groups.map(([, group]) => [group.Properties.LogGroupName, group.Properties.RetentionInDays])).toEqual([['aws-waf-logs-payments-api-prod', 365]]);
    expect(destination).toContain(`:log-group:",{"Ref":"${groups[0]![0]}"}`); // a log group's Ref is its name
  });
});

describe('the upload exception', () => {
  const pattern = new RegExp(uploadPathPattern(routes.filter((route) => route.binaryBody)));

  it('matches the multipart upload route behind a stage or a custom domain, and no other route', () => {
    expect(routes.filter((route) => route.binaryBody).map((route) => route.handler)).toEqual(['documents-create']);
    expect(pattern.test('/prod/v3/organizations/org_1/documents')).toBe(true);
    expect(pattern.test('/v3/organizations/org_1/documents/')).toBe(true);
    expect(pattern.test('/payments/v3/organizations/org_1/documents')).toBe(true);
    for (const other of ['/prod/v3/organizations/org_1/documents/uploads', '/prod/v3/organizations/org_1/paymethods', '/prod/v3/organizations/org_1/documents/doc_1', '/prod/v3/organizations/org_1/documents/x/y']) {
      expect(pattern.test(other), other).toBe(false);
    }
  });
});

describe('web ACL setting', () => {
  it('is on unless an environment turns it off: dev does, prod does not say', () => {
    expect(rawSettings('dev').webAcl).toBe(false);
    expect(rawSettings('prod')).not.toHaveProperty('webAcl');
    expect(settings('dev').webAcl).toBeUndefined();
    expect(settings('prod').webAcl).toEqual(DEFAULT_WEB_ACL);
    expect(environmentSettings('prod', { prod: { ...rawSettings('prod'), webAcl: { rateLimit: 500 } } }).webAcl).toEqual({ rateLimit: 500, evaluationWindowSeconds: 300 });
    expect(() => environmentSettings('prod', { prod: { ...rawSettings('prod'), webAcl: { rateLimit: 5 } } })).toThrow(/webAcl/);
    expect(() => environmentSettings('prod', { prod: { ...rawSettings('prod'), webAcl: true } })).toThrow(/webAcl/);
  });

  it('dev has no web ACL, and dev with one has the same rules', () => {
    const off = synthesize(settings('dev'), { routes: fixtureRoutes, functionsDir, s3Triggers: [] });
    off.resourceCountIs('AWS::WAFv2::WebACL', 0);
    off.resourceCountIs('AWS::WAFv2::LoggingConfiguration', 0);
    const on = synthesize(settings('dev', { webAcl: { rateLimit: 100, evaluationWindowSeconds: 60 } }), { routes: fixtureRoutes, functionsDir, s3Triggers: [] });
    const [acl] = Object.values(resourcesOfType(on, 'AWS::WAFv2::WebACL'));
    expect((acl!.Properties.Rules as Rule[]).map((rule) => rule.Name)).toContain('AWSManagedRulesCommonRuleSet');
    expect((acl!.Properties.Rules as Rule[]).find((rule) => rule.Name === 'rate-per-source-address')!.Statement.RateBasedStatement).toMatchObject({ Limit: 100, EvaluationWindowSec: 60 });
    on.resourceCountIs('AWS::WAFv2::WebACLAssociation', 1);
    on.resourceCountIs('AWS::WAFv2::LoggingConfiguration', 1);
  });
});

describe.each(['dev', 'prod'])('TLS in %s', (name) => {
  const template = synthesize(settings(name), { routes: fixtureRoutes, functionsDir, s3Triggers: [] });

  it('the REST API takes TLS 1.2 (forward-secret suites) or 1.3 only, in strict endpoint access mode', () => {
    const [api] = Object.values(resourcesOfType(template, 'AWS::ApiGateway::RestApi'));
    expect(api!.Properties.SecurityPolicy).toBe('SecurityPolicy_TLS13_1_2_PFS_PQ_2025_09');
    expect(api!.Properties.EndpointAccessMode).toBe('STRICT');
    expect([API_SECURITY_POLICY, API_ENDPOINT_ACCESS_MODE]).toEqual([api!.Properties.SecurityPolicy, api!.Properties.EndpointAccessMode]);
  });

  it('every bucket refuses plain HTTP and TLS older than 1.2, to anyone', () => {
    const buckets = Object.keys(resourcesOfType(template, 'AWS::S3::Bucket'));
    expect(buckets.length).toBeGreaterThanOrEqual(3);
    const policies = Object.values(resourcesOfType(template, 'AWS::S3::BucketPolicy'));
    expect(MINIMUM_S3_TLS_VERSION).toBe(1.2);
    for (const bucket of buckets) {
      const policy = policies.find((candidate) => JSON.stringify(candidate.Properties.Bucket) === JSON.stringify({ Ref: bucket }));
      expect(policy, `${bucket} has a policy`).toBeDefined();
      const statements = (policy!.Properties.PolicyDocument as { Statement: Array<Record<string, unknown>> }).Statement;
      const denies = statements.filter((statement) => statement.Effect === 'Deny' && JSON.stringify(statement.Principal) === '{"AWS":"*"}' && statement.Action === 's3:*');
      expect(denies.map((statement) => statement.Condition), bucket).toEqual(
        expect.arrayContaining([{ Bool: { 'aws:SecureTransport': 'false' } }, { NumericLessThan: { 's3:TlsVersion': MINIMUM_S3_TLS_VERSION } }]),
      );
    }
  });
});
