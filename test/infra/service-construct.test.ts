/**
 * PaymentsService (the package's entry point) placed the way a cloud team
 * would: in a stack of its own app, beside its own resources, with none of
 * this repository's cdk.json context. It must build what this repository's
 * app builds: the same resources and the same grants.
 */
import { App, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ApiGatewayAccountSettings, PaymentsService, SERVICE_FEATURE_FLAGS } from '#infra/index.ts';
import { propsTable, withPropsTable } from '../../scripts/props-table.ts';
import { fixtureRoutes } from './fixtures/routes.ts';
import { deployedTemplate, resourcesOfType, settings, synthesize } from './template-helpers.ts';
import type { Statement } from './template-helpers.ts';

const functionsDir = fileURLToPath(new URL('./fixtures/functions', import.meta.url));
const fixtures = { routes: fixtureRoutes, functionsDir };
const SYNTH_TIMEOUT_MS = 120_000;

const typeCounts = (template: Template) => {
  const counts: Record<string, number> = {};
  for (const resource of Object.values(template.toJSON().Resources as Record<string, { Type: string }>)) counts[resource.Type] = (counts[resource.Type] ?? 0) + 1;
  return counts;
};
const actionsOf = (statement: Statement) => [statement.Action].flat().sort().join(',');
/** Every role policy's statements as effect + actions, and every key policy's, by key description: logical ids apart. */
const grants = (template: Template) => ({
  rolePolicies: Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))
    .map((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement.map((statement) => `${statement.Effect ?? 'Allow'} ${actionsOf(statement)}`).sort().join(' | '))
    .sort(),
  keyPolicies: Object.values(resourcesOfType(template, 'AWS::KMS::Key'))
    .map((key) => `${String(key.Properties.Description)}: ${(key.Properties.KeyPolicy as { Statement: Statement[] }).Statement.map(actionsOf).sort().join(' | ')}`)
    .sort(),
  bucketPolicies: Object.values(resourcesOfType(template, 'AWS::S3::BucketPolicy'))
    .map((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement.map((statement) => `${statement.Effect ?? 'Allow'} ${actionsOf(statement)}`).sort().join(' | '))
    .sort(),
});

describe('PaymentsService in a cloud team\'s app', () => {
  let foreign: Template;
  let ours: Template;
  beforeAll(() => {
    // No cdk.json context: the team's app has its own flags (here none) and no VPC; only bundling is skipped.
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'CloudTeamPlatform');
    new Topic(stack, 'TeamTopic');
    new PaymentsService(stack, 'Payments', { environment: settings('dev'), ...fixtures });
    new ApiGatewayAccountSettings(new Stack(app, 'CloudTeamAccount'), 'ApiGatewayLogging');
    foreign = deployedTemplate(stack);
    ours = synthesize(settings('dev'), fixtures);
  }, SYNTH_TIMEOUT_MS);

  it('builds the same resources as this repository\'s stack, beside the team\'s own', () => {
    const expected = typeCounts(ours);
    expected['AWS::SNS::Topic'] = (expected['AWS::SNS::Topic'] ?? 0) + 1;
    expect(typeCounts(foreign)).toEqual(expected);
    expect(Object.values(typeCounts(ours)).reduce((sum, count) => sum + count, 0)).toBeGreaterThan(150);
  });

  it('grants the same actions to the same roles, and writes the same key and bucket policies', () => {
    expect(grants(foreign)).toEqual(grants(ours));
  });

  it('sets the service\'s feature flags on its own scope', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [], '@aws-cdk/aws-iam:minimizePolicies': false } });
    const service = new PaymentsService(new Stack(app, 'Flags'), 'Payments', { environment: settings('dev'), ...fixtures });
    expect(service.node.tryGetContext('@aws-cdk/aws-iam:minimizePolicies')).toBe(true);
    expect(Object.keys(SERVICE_FEATURE_FLAGS).length).toBeGreaterThan(80);
  }, SYNTH_TIMEOUT_MS);
});

describe('docs/operations.md, "Use it from your own CDK app"', () => {
  it('holds the props table generated from the construct\'s types, every prop explained', () => {
    const document = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    expect(document, 'run npm run --silent docs:props').toBe(withPropsTable(document));
    const table = propsTable();
    expect(table).not.toContain('| - |');
    for (const prop of ['environment', 'routes', 'customDomain', 'customDomain.certificate', 'alarmTopic', 'keys', 'keys.vault', 'accountUpdaterExportSchedule', 'scanning.malwareProtectionPlan', 'documentStorage.archiveAfterDays', 'environment.logRetention', 'environment.removalPolicy', 'environment.webAcl', 'environment.webAcl.rateLimit', 'environment.alarms.email', 'environment.accountConcurrencyLimit']) {
      expect(table).toContain(`| \`${prop}\` |`);
    }
  });
});
