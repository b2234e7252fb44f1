/**
 * PaymentsService's props beyond the environment, each set in a cloud team's
 * app (its own stack, account and region, none of this repository's context)
 * and read back from the template: a custom domain, the team's alarm topic,
 * the team's keys, the export schedule, and scanning without GuardDuty's plan.
 */
import { App, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { Schedule } from 'aws-cdk-lib/aws-events';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { HostedZone } from 'aws-cdk-lib/aws-route53';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_ENDPOINT_ACCESS_MODE, API_SECURITY_POLICY } from '#infra/api.ts';
import { DEFAULT_ARCHIVE_AFTER_DAYS, PaymentsService, SERVICE_KEY_SPECS } from '#infra/index.ts';
import { DEFAULT_EXPORT_SCHEDULE } from '#infra/account-updater.ts';
import { propsTable } from '../../scripts/props-table.ts';
import { definePaymentsApp } from '#infra/payments-app.ts';
import type { PaymentsServiceProps } from '#infra/index.ts';
import { MALWARE_SCAN } from '#shared/platform/triggers.ts';
import { fixtureRoutes } from './fixtures/routes.ts';
import { deployedTemplate, resourcesOfType, settings, synthesize } from './template-helpers.ts';
import type { Statement } from './template-helpers.ts';

const functionsDir = fileURLToPath(new URL('./fixtures/functions', import.meta.url));
const SYNTH_TIMEOUT_MS = 120_000;
const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };
const ACCOUNT = '123456789012';
const REGION = 'eu-west-1';
const keyArn = (id: string, region = REGION) => `arn:aws:kms:${region}:${ACCOUNT}:key/${id}`;
const CERTIFICATE_ARN = `arn:aws:acm:${REGION}:${ACCOUNT}:certificate/0a1b2c3d-0000-4000-8000-000000000001`;
const SCANNER = `arn:aws:iam::${ACCOUNT}:role/team-malware-scanner`;
/** Dev's settings with alarms on and no address: what makes the service warn about its own topic. */
const alarmsOn = () => settings('dev', { alarms: { ...settings('dev').alarms, enabled: true, email: undefined } });

/** A team's app: one stack in a fixed account and region, `extra` building the team's resources the props name. */
function teamApp(extra: (stack: Stack) => Partial<PaymentsServiceProps> = () => ({}), environment = settings('dev')) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'CloudTeamPlatform', { env: { account: ACCOUNT, region: REGION } });
  const service = new PaymentsService(stack, 'Payments', { environment, routes: fixtureRoutes, functionsDir, ...extra(stack) });
  return { stack, service };
}

const only = (template: Template, type: string) => {
  const resources = Object.entries(resourcesOfType(template, type));
  expect(resources, type).toHaveLength(1);
  return resources[0]!;
};
const statementsOf = (template: Template, type: string, property: string) =>
  Object.values(resourcesOfType(template, type)).flatMap((resource) => (resource.Properties[property] as { Statement: Statement[] }).Statement);
const json = (value: unknown) => JSON.stringify(value) ?? '';

describe('customDomain, alarmTopic and accountUpdaterExportSchedule', () => {
  let template: Template;
  let stack: Stack;
  beforeAll(() => {
    ({ stack } = teamApp((scope) => ({
      customDomain: {
        domainName: 'api.payments.example',
        certificate: Certificate.fromCertificateArn(scope, 'Certificate', CERTIFICATE_ARN),
        basePath: 'payments',
        hostedZone: HostedZone.fromHostedZoneAttributes(scope, 'Zone', { hostedZoneId: 'Z0TEAMZONE', zoneName: 'payments.example' }),
      },
      alarmTopic: new Topic(scope, 'TeamAlarms'),
      accountUpdaterExportSchedule: Schedule.cron({ minute: '15', hour: '3', day: '2' }),
    }), alarmsOn()));
    template = deployedTemplate(stack);
  }, SYNTH_TIMEOUT_MS);

  it('creates a REGIONAL domain with the REST API\'s TLS policy and access mode, mapped to the stage under the base path', () => {
    const [, domain] = only(template, 'AWS::ApiGateway::DomainName');
    const [, api] = only(template, 'AWS::ApiGateway::RestApi');
    expect(domain.Properties).toMatchObject({
      DomainName: 'api.payments.example',
      RegionalCertificateArn: CERTIFICATE_ARN,
      EndpointConfiguration: { Types: ['REGIONAL'] },
      SecurityPolicy: API_SECURITY_POLICY,
      EndpointAccessMode: API_ENDPOINT_ACCESS_MODE,
    });
    expect([domain.Properties.SecurityPolicy, domain.Properties.EndpointAccessMode]).toEqual([api.Properties.SecurityPolicy, api.Properties.EndpointAccessMode]);
    const [apiId] = only(template, 'AWS::ApiGateway::RestApi');
    const [stageId] = only(template, 'AWS::ApiGateway::Stage');
    const [domainId] = only(template, 'AWS::ApiGateway::DomainName');
    const [, mapping] = only(template, 'AWS::ApiGateway::BasePathMapping');
    expect(mapping.Properties).toEqual({ BasePath: 'payments', DomainName: { Ref: domainId }, RestApiId: { Ref: apiId }, Stage: { Ref: stageId } });
  });

  it('creates the A alias in the given zone and outputs the domain\'s target for other DNS', () => {
    const [domainId] = only(template, 'AWS::ApiGateway::DomainName');
    const [, record] = only(template, 'AWS::Route53::RecordSet');
    expect(record.Properties).toMatchObject({
      Type: 'A',
      Name: 'api.payments.example.',
      HostedZoneId: 'Z0TEAMZONE',
      AliasTarget: { DNSName: { 'Fn::GetAtt': [domainId, 'RegionalDomainName'] }, HostedZoneId: { 'Fn::GetAtt': [domainId, 'RegionalHostedZoneId'] } },
    });
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    const output = (name: string) => Object.entries(outputs).find(([id]) => id.includes(name))?.[1].Value;
    expect(output('CustomDomainTarget')).toEqual({ 'Fn::GetAtt': [domainId, 'RegionalDomainName'] });
    expect(output('CustomDomainHostedZoneId')).toEqual({ 'Fn::GetAtt': [domainId, 'RegionalHostedZoneId'] });
    expect(output('CustomDomainUrl')).toBe('https://api.payments.example/payments/');
  });

  it('creates no topic and no topic key; every alarm and its OK notify the team\'s topic', () => {
    const [teamTopic] = only(template, 'AWS::SNS::Topic');
    expect(teamTopic).toMatch(/^TeamAlarms/);
    expect(Object.values(resourcesOfType(template, 'AWS::KMS::Key')).map((key) => String(key.Properties.Description))).not.toContainEqual(expect.stringContaining('alarm topic'));
    const alarms = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm'));
    expect(alarms.length).toBeGreaterThan(20);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: teamTopic }]);
      expect(alarm.Properties.OKActions).toEqual([{ Ref: teamTopic }]);
    }
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(Object.entries(outputs).find(([id]) => id.includes('AlarmTopicArn'))?.[1].Value).toEqual({ Ref: teamTopic });
  });

  it('does not warn of a topic without subscribers: the topic is the team\'s', () => {
    const warnings = stack.node.findAll().flatMap((construct) => construct.node.metadata).filter((entry) => entry.type === 'aws:cdk:warning');
    expect(warnings.map((entry) => String(entry.data))).not.toContainEqual(expect.stringContaining('alarm topic has no subscriber'));
  });

  it('exports on the given schedule', () => {
    const rules = Object.values(resourcesOfType(template, 'AWS::Events::Rule')).filter((rule) => rule.Properties.ScheduleExpression !== undefined);
    expect(rules.map((rule) => [rule.Properties.Description, rule.Properties.ScheduleExpression])).toEqual([['Account Updater: export the previous month', 'cron(15 3 2 * ? *)']]);
  });

  it('takes this repository\'s -c auExportSchedule as the prop, and keeps the default without it', () => {
    const exportSchedule = (context: Record<string, unknown>) => {
      const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], ...context } });
      const { api } = definePaymentsApp(app, { routes: fixtureRoutes, functionsDir });
      return Object.values(resourcesOfType(deployedTemplate(api), 'AWS::Events::Rule')).flatMap((rule) => rule.Properties.ScheduleExpression ?? []);
    };
    expect(exportSchedule({ auExportSchedule: 'cron(30 2 1 * ? *)' })).toEqual(['cron(30 2 1 * ? *)']);
    expect(exportSchedule({})).toEqual(['cron(0 6 1 * ? *)']);
  }, SYNTH_TIMEOUT_MS);

  it('refuses a certificate of another region, a domain outside the zone, a topic beside an address or a topic key', () => {
    const certificate = (scope: Stack, region: string) => Certificate.fromCertificateArn(scope, 'Certificate', CERTIFICATE_ARN.replace(REGION, region));
    expect(() => teamApp((scope) => ({ customDomain: { domainName: 'api.payments.example', certificate: certificate(scope, 'us-east-1') } })))
      .toThrow('customDomain.certificate: a REGIONAL domain needs a certificate in eu-west-1, not us-east-1');
    expect(() => teamApp((scope) => ({
      customDomain: { domainName: 'api.payments.example', certificate: certificate(scope, REGION), hostedZone: HostedZone.fromHostedZoneAttributes(scope, 'Zone', { hostedZoneId: 'Z1', zoneName: 'other.example' }) },
    }))).toThrow('customDomain.hostedZone: api.payments.example is not in the zone other.example');
    expect(() => teamApp((scope) => ({ alarmTopic: new Topic(scope, 'T') }), settings('dev', { alarms: { ...settings('dev').alarms, email: 'oncall@example.com' } })))
      .toThrow('alarmTopic and environment.alarms.email');
    expect(() => teamApp((scope) => ({ alarmTopic: new Topic(scope, 'T'), keys: { alarmTopic: Key.fromKeyArn(scope, 'K', keyArn('1')) } })))
      .toThrow('alarmTopic and keys.alarmTopic');
  });
});

describe('keys: the team\'s keys for all seven uses', () => {
  const given = {
    vault: keyArn('00000000-0000-4000-8000-0000000000a1'),
    fingerprint: keyArn('00000000-0000-4000-8000-0000000000a3'),
    requestHash: keyArn('00000000-0000-4000-8000-0000000000a4'),
    reports: keyArn('00000000-0000-4000-8000-0000000000a5'),
    stateMachine: keyArn('00000000-0000-4000-8000-0000000000a6'),
    alarmTopic: keyArn('00000000-0000-4000-8000-0000000000a7'),
  };
  let template: Template;
  let ours: Template;
  let teamMacKey: string;
  beforeAll(() => {
    const { stack } = teamApp((scope) => {
      const imported = Object.fromEntries(Object.entries(given).map(([use, arn]) => [use, Key.fromKeyArn(scope, `Team-${use}`, arn)]));
      // One key defined in the team's app, in the same stack: its policy is CDK's to write, so it gets the grants.
      const credentialMac = new Key(scope, 'TeamMacKey', { keySpec: KeySpec.HMAC_256, keyUsage: KeyUsage.GENERATE_VERIFY_MAC, description: 'team credential MAC' });
      return { keys: { ...imported, credentialMac } };
    }, alarmsOn());
    template = deployedTemplate(stack);
    teamMacKey = only(template, 'AWS::KMS::Key')[0];
    ours = synthesize(alarmsOn(), { routes: fixtureRoutes, functionsDir });
  }, SYNTH_TIMEOUT_MS);

  it('creates no key of its own: the team\'s one key is the only key in the template', () => {
    expect(Object.keys(resourcesOfType(ours, 'AWS::KMS::Key'))).toHaveLength(7);
    expect(resourcesOfType(template, 'AWS::KMS::Key')[teamMacKey]!.Properties.Description).toBe('team credential MAC');
  });

  it('encrypts the documents and reports buckets, the state machine and the alarm topic with the given keys', () => {
    const encryptionOf = (bucket: { Properties: Record<string, unknown> }) => json(bucket.Properties.BucketEncryption);
    const buckets = Object.values(resourcesOfType(template, 'AWS::S3::Bucket')).map(encryptionOf);
    expect(buckets.filter((encryption) => encryption.includes(given.vault))).toHaveLength(1);
    expect(buckets.filter((encryption) => encryption.includes(given.reports))).toHaveLength(1);
    expect(only(template, 'AWS::StepFunctions::StateMachine')[1].Properties.EncryptionConfiguration).toMatchObject({ KmsKeyId: given.stateMachine });
    expect(only(template, 'AWS::SNS::Topic')[1].Properties.KmsMasterKeyId).toBe(given.alarmTopic);
    // The documents bucket still refuses objects under any other key: now the team's vault key.
    expect(json(statementsOf(template, 'AWS::S3::BucketPolicy', 'PolicyDocument').find((statement) => statement.Sid === 'DenyOtherEncryptionKey'))).toContain(given.vault);
  });

  it('grants every role the same actions as with the service\'s own keys, on the given keys\' ARNs', () => {
    const roleActions = (of: Template) => Object.values(resourcesOfType(of, 'AWS::IAM::Policy'))
      .map((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement.map((statement) => [statement.Action].flat().sort().join(',')).sort().join(' | '))
      .sort();
    expect(roleActions(template)).toEqual(roleActions(ours));
    const kmsStatements = statementsOf(template, 'AWS::IAM::Policy', 'PolicyDocument').filter((statement) => [statement.Action].flat().some((action) => action.startsWith('kms:')));
    const named = (arn: string) => kmsStatements.filter((statement) => json(statement.Resource).includes(arn)).length;
    for (const use of ['vault', 'fingerprint', 'requestHash', 'reports', 'stateMachine'] as const) expect(named(given[use]), use).toBeGreaterThan(0);
    expect(kmsStatements.filter((statement) => json(statement.Resource).includes(teamMacKey)).length).toBeGreaterThan(0);
    // A key of the app gets the key policy statements too, each role named by condition.
    const macPolicy = (resourcesOfType(template, 'AWS::KMS::Key')[teamMacKey]!.Properties.KeyPolicy as { Statement: Statement[] }).Statement;
    expect(macPolicy.filter((statement) => json(statement.Condition).includes('aws:PrincipalArn')).length).toBeGreaterThan(0);
  });

  it('refuses what CDK can see is wrong: a key spec or usage, an alias, one key for two uses, another region', () => {
    const attempt = (keys: (scope: Stack) => Record<string, IKey>) => () => teamApp((scope) => ({ keys: keys(scope) }));
    expect(attempt((scope) => ({ fingerprint: new Key(scope, 'Symmetric') }))).toThrow('keys.fingerprint: a SYMMETRIC_DEFAULT key for ENCRYPT_DECRYPT; it must be HMAC_256 for GENERATE_VERIFY_MAC');
    expect(attempt((scope) => ({ vault: new Key(scope, 'Mac', { keySpec: KeySpec.HMAC_256, keyUsage: KeyUsage.GENERATE_VERIFY_MAC }) }))).toThrow('keys.vault: a HMAC_256 key for GENERATE_VERIFY_MAC; it must be SYMMETRIC_DEFAULT for ENCRYPT_DECRYPT');
    expect(attempt((scope) => ({ vault: Key.fromKeyArn(scope, 'Alias', `arn:aws:kms:${REGION}:${ACCOUNT}:alias/payments`) }))).toThrow('names an alias');
    expect(attempt((scope) => {
      const key = Key.fromKeyArn(scope, 'Both', keyArn('b'));
      return { reports: key, stateMachine: key };
    })).toThrow('keys.stateMachine: the same key as keys.reports');
    expect(attempt((scope) => ({ vault: Key.fromKeyArn(scope, 'Far', keyArn('c', 'us-east-1')) }))).toThrow('keys.vault: the key is in us-east-1, the stack in eu-west-1');
  });
});

describe('scanning: a scanner of the team\'s own instead of GuardDuty\'s plan', () => {
  let template: Template;
  let withPlan: Template;
  beforeAll(() => {
    template = deployedTemplate(teamApp(() => ({ scanning: { malwareProtectionPlan: false, scannerRoleArns: [SCANNER], resultEventSource: 'team.malware-scanner' } })).stack);
    withPlan = deployedTemplate(teamApp().stack);
  }, SYNTH_TIMEOUT_MS);

  it('creates no malware protection plan and no GuardDuty role', () => {
    expect(Object.keys(resourcesOfType(withPlan, 'AWS::GuardDuty::MalwareProtectionPlan'))).toHaveLength(1);
    expect(resourcesOfType(template, 'AWS::GuardDuty::MalwareProtectionPlan')).toEqual({});
    expect(json(resourcesOfType(template, 'AWS::IAM::Role'))).not.toContain('guardduty');
  });

  it('keeps the scan gate, exempting the team\'s scanner and the finalizer only', () => {
    const gate = (of: Template) => statementsOf(of, 'AWS::S3::BucketPolicy', 'PolicyDocument').find((statement) => statement.Sid === 'DenyReadsUntilScannedClean')!;
    const exempt = (of: Template) => (gate(of).Condition as { StringNotEquals: Record<string, unknown[]> }).StringNotEquals['aws:PrincipalArn']!;
    expect(gate(template).Condition).toMatchObject({ StringNotEquals: { [`s3:ExistingObjectTag/${MALWARE_SCAN.tagKey}`]: MALWARE_SCAN.cleanTagValue } });
    expect(exempt(template)).toHaveLength(2);
    expect(exempt(template)[0]).toBe(SCANNER);
    // The same finalizer as with the plan, whose first exemption is GuardDuty's role.
    expect(exempt(template)[1]).toEqual(exempt(withPlan)[1]);
  });

  it('lets the scanner read, tag and decrypt (through S3) stored files, in the bucket and vault key policies', () => {
    const allow = statementsOf(template, 'AWS::S3::BucketPolicy', 'PolicyDocument').find((statement) => statement.Sid === 'OwnScannersReadAndTag')!;
    expect(allow.Principal).toEqual({ AWS: SCANNER });
    expect([allow.Action].flat()).toEqual(expect.arrayContaining(['s3:GetObject', 's3:PutObjectTagging', 's3:PutObjectVersionTagging']));
    expect(json(allow.Resource)).toContain(`/${MALWARE_SCAN.objectPrefixes[0]}*`);
    const vault = Object.values(resourcesOfType(template, 'AWS::KMS::Key')).find((key) => String(key.Properties.Description).includes('encrypts documents'))!;
    const decrypt = (vault.Properties.KeyPolicy as { Statement: Statement[] }).Statement.filter((statement) => json(statement.Condition).includes(SCANNER));
    expect(decrypt).toHaveLength(1);
    expect(decrypt[0]!.Action).toBe('kms:Decrypt');
    expect(json(decrypt[0]!.Condition)).toContain('kms:ViaService');
  });

  it('sends the documents bucket\'s Object Created events to EventBridge for the scanner, as the plan does for itself', () => {
    const notifications = (of: Template) => Object.values(resourcesOfType(of, 'Custom::S3BucketNotifications')).map((resource) => json(resource.Properties.NotificationConfiguration));
    expect(notifications(template).filter((configuration) => configuration.includes('EventBridgeConfiguration'))).toHaveLength(2);
    // Without the team's scanner only the reports bucket sends them.
    expect(notifications(withPlan).filter((configuration) => configuration.includes('EventBridgeConfiguration'))).toHaveLength(1);
  });

  it('invokes the scan result function on the scanner\'s events: its source, GuardDuty\'s detail-type', () => {
    const patterns = Object.values(resourcesOfType(template, 'AWS::Events::Rule')).map((rule) => rule.Properties.EventPattern as { source?: string[]; 'detail-type'?: string[] } | undefined).filter((pattern) => pattern?.['detail-type']?.includes(MALWARE_SCAN.detailType));
    expect(patterns.map((pattern) => pattern!.source)).toEqual([['team.malware-scanner']]);
  });

  it('refuses the plan off without a scanner or its event source, and scanner settings beside the plan', () => {
    const attempt = (scanning: PaymentsServiceProps['scanning']) => () => teamApp(() => ({ scanning }));
    expect(attempt({ malwareProtectionPlan: false, resultEventSource: 'team.scanner' })).toThrow('name your scanner\'s roles in scanning.scannerRoleArns');
    expect(attempt({ malwareProtectionPlan: false, scannerRoleArns: [SCANNER] })).toThrow('scanning.resultEventSource must name the source');
    expect(attempt({ malwareProtectionPlan: false, scannerRoleArns: [SCANNER], resultEventSource: 'aws.guardduty' })).toThrow('not aws.*');
    expect(attempt({ malwareProtectionPlan: false, scannerRoleArns: ['team-scanner'], resultEventSource: 'team.scanner' })).toThrow('"team-scanner" is not an IAM role ARN');
    expect(attempt({ scannerRoleArns: [SCANNER] })).toThrow('set scanning.malwareProtectionPlan to false with them');
  });
});

describe('documentStorage.archiveAfterDays', () => {
  const lifecycle = (documentStorage: PaymentsServiceProps['documentStorage']) => {
    const template = deployedTemplate(teamApp(() => ({ documentStorage })).stack);
    const documents = Object.values(resourcesOfType(template, 'AWS::S3::Bucket')).find((bucket) => bucket.Properties.ObjectLockEnabled === true && bucket.Properties.LoggingConfiguration !== undefined)!;
    return (documents.Properties.LifecycleConfiguration as { Rules: Array<{ Id?: string; Transitions?: unknown; ObjectSizeGreaterThan?: unknown }> }).Rules;
  };

  it('moves stored files to Glacier IR after the given days, 30 by default, and not at all with false', () => {
    const archive = (rules: ReturnType<typeof lifecycle>) => rules.filter((rule) => rule.Id === 'stored-documents-to-glacier-ir');
    expect(archive(lifecycle(undefined))).toEqual([expect.objectContaining({ ObjectSizeGreaterThan: '131072', Transitions: [{ StorageClass: 'GLACIER_IR', TransitionInDays: 30 }] })]);
    expect(archive(lifecycle({ archiveAfterDays: 120 }))).toEqual([expect.objectContaining({ ObjectSizeGreaterThan: '131072', Transitions: [{ StorageClass: 'GLACIER_IR', TransitionInDays: 120 }] })]);
    const standardOnly = lifecycle({ archiveAfterDays: false });
    expect(standardOnly.map((rule) => rule.Id)).toEqual(['noncurrent-versions', 'abandoned-uploads']);
    // The size override follows the rule: without it, no other rule gets a size condition.
    expect(standardOnly.filter((rule) => rule.ObjectSizeGreaterThan !== undefined)).toEqual([]);
  }, SYNTH_TIMEOUT_MS);

  it('refuses a day count S3 would not take', () => {
    expect(() => teamApp(() => ({ documentStorage: { archiveAfterDays: 0 } }))).toThrow('documentStorage.archiveAfterDays: 0 is not a whole number of days');
    expect(() => teamApp(() => ({ documentStorage: { archiveAfterDays: 1.5 } }))).toThrow('1.5 is not a whole number');
  });
});

describe('docs/operations.md, "Bringing your own keys"', () => {
  it('gives each use the spec and usage synth checks, for the seven keys the service creates', () => {
    const document = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    const section = document.slice(document.indexOf('### Bringing your own keys'), document.indexOf('## Environments'));
    const rows = [...section.matchAll(/^\| `(\w+)` \| `(\w+)` \| `(\w+)` \|$/gm)].map(([, use, keySpec, keyUsage]) => [use, { keySpec, keyUsage }]);
    expect(Object.fromEntries(rows)).toEqual(SERVICE_KEY_SPECS);
    // "seven": the keys the service creates in this repository's template (the keys test above counts them too).
    expect(section).toContain('Any of the service\'s seven keys can be yours');
    expect(Object.keys(SERVICE_KEY_SPECS)).toHaveLength(7);
  });

  it('states the defaults the code has: the export schedule and the archive days', () => {
    const table = propsTable();
    expect(table).toContain(`Default: \`${DEFAULT_EXPORT_SCHEDULE}\`, 06:00 UTC on the 1st`);
    expect(DEFAULT_EXPORT_SCHEDULE).toBe('cron(0 6 1 * ? *)');
    expect(table).toContain(`Glacier Instant Retrieval (default ${DEFAULT_ARCHIVE_AFTER_DAYS})`);
    expect(table).toContain(`after ${DEFAULT_ARCHIVE_AFTER_DAYS} days.`);
  });
});
