import { fileURLToPath } from 'node:url';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { MALWARE_SCAN, READS_BEFORE_SCAN, eventRuleTriggers } from '#shared/platform/triggers.ts';
import { fixtureRoutes } from './fixtures/routes.ts';
import { bucketId, resourcesOfType, settings, synthesize } from './template-helpers.ts';

const functionsDir = fileURLToPath(new URL('./fixtures/functions', import.meta.url));

type Properties = Record<string, unknown>;
type Statement = { Sid?: string; Effect: string; Action: string | string[]; Principal?: unknown; Resource?: unknown; Condition?: Record<string, Record<string, unknown>> };

const actionsOf = (statement: Statement) => [statement.Action].flat();
const json = (value: unknown) => JSON.stringify(value) ?? '';

describe('documents kept as evidence: the stack', () => {
  let template: Template;
  let documentsId: string;
  let documents: Properties;

  beforeAll(() => {
    template = synthesize(settings('prod'), { routes: fixtureRoutes, functionsDir });
    documentsId = bucketId(template, 'documents');
    documents = resourcesOfType(template, 'AWS::S3::Bucket')[documentsId]!.Properties;
  }, 120_000);

  it('turns S3 Object Lock on in the versioned documents bucket, with no default retention (the service locks retained files itself)', () => {
    expect(documents.ObjectLockEnabled).toBe(true);
    expect(documents.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(documents).not.toHaveProperty('ObjectLockConfiguration.Rule');
  });

  it('gives no role and no bucket policy the right to bypass governance retention', () => {
    const policies = [...Object.values(resourcesOfType(template, 'AWS::IAM::Policy')), ...Object.values(resourcesOfType(template, 'AWS::IAM::Role'))];
    expect(json(policies.map((policy) => policy.Properties))).not.toContain('BypassGovernanceRetention');
    // Nor a wildcard that would include it.
    const documents = (properties: Properties) => [
      ...((properties.PolicyDocument as { Statement?: Statement[] } | undefined)?.Statement ?? []),
      ...((properties.Policies as Array<{ PolicyDocument: { Statement: Statement[] } }> | undefined) ?? []).flatMap((policy) => policy.PolicyDocument.Statement),
    ];
    const granted = policies.flatMap((policy) => documents(policy.Properties)).filter((statement) => statement.Effect === 'Allow').flatMap(actionsOf);
    expect(granted.filter((action) => ['*', 's3:*', 's3:Bypass*', 's3:BypassGovernanceRetention'].includes(action))).toEqual([]);
    const bucketPolicies = Object.values(resourcesOfType(template, 'AWS::S3::BucketPolicy'));
    const allows = bucketPolicies.flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement).filter((statement) => statement.Effect === 'Allow');
    expect(allows.flatMap(actionsOf)).not.toContain('s3:BypassGovernanceRetention');
  });

  it('protects the documents bucket with a GuardDuty Malware Protection plan that tags its verdicts, under the documented role', () => {
    const plans = Object.values(resourcesOfType(template, 'AWS::GuardDuty::MalwareProtectionPlan'));
    expect(plans).toHaveLength(1);
    const plan = plans[0]!.Properties;
    expect(plan.ProtectedResource).toEqual({ S3Bucket: { BucketName: { Ref: documentsId }, ObjectPrefixes: [...MALWARE_SCAN.objectPrefixes] } });
    expect(plan.Actions).toEqual({ Tagging: { Status: 'ENABLED' } });
    const roleId = (plan.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const role = resourcesOfType(template, 'AWS::IAM::Role')[roleId]!.Properties;
    expect(json(role.AssumeRolePolicyDocument)).toContain('malware-protection-plan.guardduty.amazonaws.com');
    const statements = (role.Policies as Array<{ PolicyDocument: { Statement: Statement[] } }>).flatMap((policy) => policy.PolicyDocument.Statement);
    expect(statements.map((statement) => statement.Sid).sort()).toEqual([
      'AllowCheckBucketOwnership',
      'AllowDecryptForMalwareScan',
      'AllowEnableS3EventBridgeEvents',
      'AllowGuardDutyToMonitorEventBridgeManagedRule',
      'AllowMalwareScan',
      'AllowManagedRuleToSendS3EventsToGuardDuty',
      'AllowPostScanTag',
      'AllowPutValidationObject',
    ]);
    expect(statements.find((statement) => statement.Sid === 'AllowPostScanTag')!.Action).toContain('s3:PutObjectTagging');
  });

  it('refuses reads of unscanned or unclean files to everyone but GuardDuty and the finalizer', () => {
    const statements = Object.values(resourcesOfType(template, 'AWS::S3::BucketPolicy'))
      .filter((policy) => json(policy.Properties.Bucket) === json({ Ref: documentsId }))
      .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
    const gate = statements.find((statement) => statement.Sid === 'DenyReadsUntilScannedClean')!;
    expect(gate).toMatchObject({ Effect: 'Deny', Principal: { AWS: '*' } });
    expect(actionsOf(gate).sort()).toEqual(['s3:GetObject', 's3:GetObjectVersion']);
    expect(json(gate.Resource)).toContain('/documents/*');
    const condition = gate.Condition!.StringNotEquals!;
    expect(condition[`s3:ExistingObjectTag/${MALWARE_SCAN.tagKey}`]).toBe('NO_THREATS_FOUND');
    const exempt = condition['aws:PrincipalArn'] as unknown[];
    expect(exempt).toHaveLength(1 + READS_BEFORE_SCAN.length);
    const planRole = (Object.values(resourcesOfType(template, 'AWS::GuardDuty::MalwareProtectionPlan'))[0]!.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    expect(json(exempt)).toContain(planRole);
    const finalizer = Object.entries(resourcesOfType(template, 'AWS::Lambda::Function')).find(([, fn]) => String(fn.Properties.Description).startsWith('Checks a file posted'))!;
    const finalizerRole = (finalizer[1].Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    expect(json(exempt)).toContain(finalizerRole);
  });

  it('sends GuardDuty scan results for this bucket to the scan-result function, failures to a dead-letter queue', () => {
    const rules = Object.values(resourcesOfType(template, 'AWS::Events::Rule')).filter((rule) => json(rule.Properties.EventPattern).includes('aws.guardduty'));
    expect(rules).toHaveLength(eventRuleTriggers.length);
    const rule = rules[0]!.Properties;
    expect(rule.EventPattern).toEqual({
      source: ['aws.guardduty'],
      'detail-type': ['GuardDuty Malware Protection Object Scan Result'],
      detail: { s3ObjectDetails: { bucketName: [{ Ref: documentsId }] } },
    });
    const [target] = rule.Targets as Array<{ Arn: { 'Fn::GetAtt': [string, string] }; DeadLetterConfig?: { Arn: unknown }; RetryPolicy?: unknown }>;
    expect(target?.DeadLetterConfig).toBeDefined();
    expect(target?.RetryPolicy).toEqual({ MaximumEventAgeInSeconds: 86_400, MaximumRetryAttempts: 185 });
    // A result the function fails (one that arrives before its record settles, until Lambda's retries record it) ends there too.
    const [scanResultFunction] = target!.Arn['Fn::GetAtt'];
    const invokeConfigs = Object.values(resourcesOfType(template, 'AWS::Lambda::EventInvokeConfig')).filter((config) => json(config.Properties.FunctionName).includes(scanResultFunction));
    expect(invokeConfigs.map((config) => config.Properties)).toEqual([
      { FunctionName: { Ref: scanResultFunction }, Qualifier: '$LATEST', MaximumRetryAttempts: 2, DestinationConfig: { OnFailure: { Destination: target!.DeadLetterConfig!.Arn } } },
    ]);
  });

  it('alarms on failed scans', () => {
    const alarms = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm')).filter((alarm) => String(alarm.Properties.AlarmName ?? alarm.Properties.AlarmDescription).includes('scan'));
    const failure = alarms.find((alarm) => json(alarm.Properties.Metrics).includes('DocumentScanFailures'));
    expect(failure, json(alarms.map((alarm) => alarm.Properties.AlarmName))).toBeDefined();
    expect(failure!.Properties).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
  });
});
