import { eventRuleTriggers, s3Triggers, streamTriggers } from '#shared/platform/triggers.ts';
import { GLOBAL_SECONDARY_INDEXES } from '#shared/platform/table.ts';
import { WEBHOOK_QUEUE_TRIGGERS } from '#shared/platform/webhooks.ts';
import { Match } from 'aws-cdk-lib/assertions';
import type { Template } from 'aws-cdk-lib/assertions';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { KEY_ADMIN_ACTIONS } from '#infra/keys.ts';
import { environmentSettings } from '#infra/environments.ts';
import { BUSINESS_METRICS, METRICS_NAMESPACE, ROUTE_METRICS, SERVICE_NAME } from '#shared/observability/catalog.ts';
import { fixtureRoutes } from './fixtures/routes.ts';
import {
  bucketId,
  findMethod,
  integrationFunctionId,
  keyIdByDescription,
  keyPolicyStatements,
  keyStatementNames,
  principalArnCondition,
  resourcesOfType,
  roleIdOf,
  settings,
  synthesize,
} from './template-helpers.ts';
import type { Statement } from './template-helpers.ts';

const functionsDir = fileURLToPath(new URL('./fixtures/functions', import.meta.url));
const SYNTH_TIMEOUT_MS = 60_000;
const fixtures = { routes: fixtureRoutes, functionsDir };
const USAGE_ACTIONS = ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey', 'kms:GenerateDataKey*', 'kms:GenerateMac', 'kms:ReEncrypt*', 'kms:CreateGrant', 'kms:*'];

const actions = (statement: Statement) => [statement.Action].flat() as string[];
const isAccountRoot = (principal: unknown) => JSON.stringify(principal).includes(':root');
const functionIdFor = (template: Template, handler: string) => {
  const route = fixtureRoutes.find((candidate) => candidate.handler === handler)!;
  return integrationFunctionId(template, findMethod(template, route.path, route.method)!);
};
const alarmNames = (template: Template) =>
  Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm')).map((alarm) => alarm.Properties.AlarmName as string).sort();

describe('operations (fixture routes, dev)', () => {
  let template: Template;
  beforeAll(() => {
    template = synthesize(settings('dev'), fixtures);
  }, SYNTH_TIMEOUT_MS);

  it('gives no key usage to the account root, only administration', () => {
    for (const fragment of ['account-number data keys', 'secure keys', 'alarm topic']) {
      const statements = keyPolicyStatements(template, keyIdByDescription(template, fragment));
      const admin = statements.find((statement) => statement.Sid === 'KeyAdministration')!;
      expect(actions(admin).sort(), fragment).toEqual([...KEY_ADMIN_ACTIONS].sort());
      // Roles are trusted as the account plus aws:PrincipalArn (infra/keys.ts): only a statement without that condition trusts the whole account.
      const rootUsage = statements
        .filter((candidate) => isAccountRoot(candidate.Principal) && principalArnCondition(candidate) === undefined)
        .flatMap((statement) => actions(statement).filter((action) => USAGE_ACTIONS.includes(action)));
      // The one exception: the admin CLI's kms:GenerateMac on the credential key, when no issuer role is configured.
      expect(rootUsage, fragment).toEqual(fragment === 'secure keys' ? ['kms:GenerateMac'] : []);
    }
  });

  it('names every role that uses the vault key in its key policy, with the same actions and conditions', () => {
    const conditionKind = (condition: unknown) => {
      const text = JSON.stringify(condition ?? {});
      if (text.includes('kms:ViaService')) return 'via S3';
      if (text.includes('"kms:EncryptionContext:purpose":"paymethod-vault"')) return 'vault context';
      return 'unconditioned';
    };
    const statements = keyPolicyStatements(template, keyIdByDescription(template, 'account-number data keys'));
    const usage = (handler: string) => statements
      .filter((statement) => keyStatementNames(statement, roleIdOf(template, functionIdFor(template, handler))))
      .map((statement) => ({ actions: actions(statement).sort(), condition: conditionKind(statement.Condition) }));
    expect(usage('paymethods-create')).toEqual([{ actions: ['kms:GenerateDataKey'], condition: 'vault context' }]);
    expect(usage('paymethods-charge')).toEqual([{ actions: ['kms:Decrypt'], condition: 'vault context' }]);
    expect(usage('documents-file')).toEqual([{ actions: ['kms:Decrypt'], condition: 'via S3' }]);
    expect(usage('documents-upload-create')).toEqual([{ actions: ['kms:GenerateDataKey'], condition: 'via S3' }]);
    expect(usage('paymethods-list')).toEqual([]);
    expect(usage('documents-delete')).toEqual([]);
  });

  it('lets the configured issuer roles, not the account, generate credential MACs', () => {
    const issuer = 'arn:aws:iam::123456789012:role/payments-operator';
    const withIssuer = synthesize(settings('dev', { credentialIssuers: [issuer] }), fixtures);
    const statements = keyPolicyStatements(withIssuer, keyIdByDescription(withIssuer, 'secure keys'));
    const macStatements = statements.filter((statement) => actions(statement).includes('kms:GenerateMac'));
    expect(macStatements.some((statement) => keyStatementNames(statement, issuer))).toBe(true);
    expect(macStatements.some((statement) => isAccountRoot(statement.Principal) && principalArnCondition(statement) === undefined)).toBe(false);
  }, SYNTH_TIMEOUT_MS);

  it('traces every function and the stage', () => {
    for (const [id, fn] of Object.entries(resourcesOfType(template, 'AWS::Lambda::Function'))) {
      if (id.startsWith('BucketNotificationsHandler')) continue; // CDK's own deploy-time custom resource
      expect(fn.Properties.TracingConfig, id).toEqual({ Mode: 'Active' });
      expect((fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables, id).toMatchObject({
        POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
      });
    }
    template.hasResourceProperties('AWS::ApiGateway::Stage', { TracingEnabled: true });
  });

  it('writes a JSON access log with the caller organization and no headers or bodies, and error-only execution logs', () => {
    const [stage] = Object.values(resourcesOfType(template, 'AWS::ApiGateway::Stage'));
    const { AccessLogSetting, MethodSettings } = stage!.Properties as {
      AccessLogSetting: { DestinationArn: unknown; Format: string };
      MethodSettings: Record<string, unknown>[];
    };
    const fields = JSON.parse(AccessLogSetting.Format.replace(/:\$context\.(status|responseLatency)/g, ':0')) as Record<string, string>;
    expect(fields).toMatchObject({
      requestId: '$context.requestId',
      callerOrganizationId: '$context.authorizer.organizationId',
      httpMethod: '$context.httpMethod',
      resourcePath: '$context.resourcePath',
    });
    expect(Object.keys(fields)).toEqual(expect.arrayContaining(['status', 'responseLatency']));
    expect(AccessLogSetting.Format).not.toMatch(/\$input|header|requestOverride|\.path\b|querystring|body/i);
    expect(MethodSettings).toEqual([expect.objectContaining({ LoggingLevel: 'ERROR', DataTraceEnabled: false })]);
    template.hasResourceProperties('AWS::Logs::LogGroup', {
      LogGroupName: { 'Fn::Join': ['', ['API-Gateway-Execution-Logs_', Match.anyValue(), '/dev']] },
      RetentionInDays: 14,
    });
  });

  it('expires abandoned uploads after a day and old versions after 30, and logs access to a separate bucket', () => {
    const documents = resourcesOfType(template, 'AWS::S3::Bucket')[bucketId(template, 'documents')]!.Properties;
    expect(documents.LifecycleConfiguration).toEqual({
      Rules: expect.arrayContaining([
        expect.objectContaining({ Prefix: 'uploads/', ExpirationInDays: 1, Status: 'Enabled' }),
        expect.objectContaining({ NoncurrentVersionExpiration: { NoncurrentDays: 30 }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }),
      ]),
    });
    const logsId = bucketId(template, 'access-logs');
    expect(documents.LoggingConfiguration).toEqual({ DestinationBucketName: { Ref: logsId }, LogFilePrefix: 'documents-bucket/' });
    expect(resourcesOfType(template, 'AWS::S3::Bucket')[logsId]!.Properties).toMatchObject({
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      VersioningConfiguration: { Status: 'Enabled' },
      LifecycleConfiguration: { Rules: [expect.objectContaining({ ExpirationInDays: 14 })] },
    });
    const logsPolicy = Object.values(resourcesOfType(template, 'AWS::S3::BucketPolicy'))
      .find((policy) => JSON.stringify(policy.Properties.Bucket) === JSON.stringify({ Ref: logsId }))!;
    expect(JSON.stringify(logsPolicy.Properties.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
    expect(JSON.stringify(logsPolicy.Properties.PolicyDocument)).toContain('logging.s3.amazonaws.com');
  });

  it('creates no alarms with alarms off, but the encrypted TLS-only topic and the dashboard', () => {
    template.resourceCountIs('AWS::CloudWatch::Alarm', 0);
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: { 'Fn::GetAtt': [keyIdByDescription(template, 'alarm topic'), 'Arn'] } });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({ Effect: 'Allow', Principal: { Service: 'cloudwatch.amazonaws.com' }, Action: 'sns:Publish' }),
        ]),
      },
    });
    template.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'PaymentsApi-dev' });
  });

  it('graphs every route of the route table and every business metric on the dashboard', () => {
    const [dashboard] = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Dashboard'));
    const body = JSON.stringify(dashboard!.Properties.DashboardBody);
    for (const route of fixtureRoutes) {
      for (const metric of Object.values(ROUTE_METRICS)) {
        expect(body).toContain(`[\\"${METRICS_NAMESPACE}\\",\\"${metric}\\",\\"environment\\",\\"sandbox\\",\\"route\\",\\"${route.handler}\\",\\"service\\",\\"${SERVICE_NAME}\\"`);
      }
    }
    for (const name of Object.keys(BUSINESS_METRICS)) expect(body).toContain(`MetricName=\\\\\\"${name}\\\\\\"`);
  });

  it('graphs every table the same way: consumed units, throttles and latency, each under its own table name', () => {
    const [dashboard] = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Dashboard'));
    const body = JSON.stringify(dashboard!.Properties.DashboardBody);
    const tables = Object.keys(resourcesOfType(template, 'AWS::DynamoDB::Table'));
    expect(tables).toHaveLength(3);
    for (const title of ['DynamoDB', 'Account Updater history', 'Webhook deliveries']) {
      for (const graph of ['consumed capacity units', 'throttle events', 'average latency by operation (ms)']) expect(body).toContain(`${title}: ${graph}`);
    }
    // Every table's name appears in the dashboard's metrics (as a reference the template resolves).
    for (const table of tables) expect(body).toContain(`{"Ref":"${table}"}`);
  });

  it('reserves concurrency only where the environment says so', () => {
    const reserved = synthesize(settings('dev', { reservedConcurrency: { 'paymethods-create': 5 } }), fixtures);
    for (const [id, fn] of Object.entries(resourcesOfType(reserved, 'AWS::Lambda::Function'))) {
      expect(fn.Properties.ReservedConcurrentExecutions, id).toBe(id === functionIdFor(reserved, 'paymethods-create') ? 5 : undefined);
    }
    // A name that is no function of the stack (misspelt, or a route since renamed) fails the synth instead of capping nothing.
    expect(() => synthesize(settings('dev', { reservedConcurrency: { 'paymethods-craete': 5 } }), fixtures)).toThrow(/reservedConcurrency names no function of .*: paymethods-craete \(its functions: .*paymethods-create/);
  }, SYNTH_TIMEOUT_MS);

  it('deletes data with the stack in dev', () => {
    for (const type of ['AWS::DynamoDB::Table', 'AWS::KMS::Key', 'AWS::S3::Bucket', 'AWS::Logs::LogGroup', 'AWS::SQS::Queue']) {
      for (const resource of Object.values(template.findResources(type))) expect(resource.DeletionPolicy, type).toBe('Delete');
    }
  });
});

describe('operations (fixture routes, prod)', () => {
  let template: Template;
  beforeAll(() => {
    // The stack itself uses the hooks: the Account Updater's dead-letter queue, export failures and failed runs.
    template = synthesize(settings('prod'), fixtures);
  }, SYNTH_TIMEOUT_MS);

  it('keeps every dead-letter queue 14 days, encrypted, TLS only and alarmed on its depth', () => {
    // The webhook intake and delivery queues are working queues, checked in test/infra/webhooks.test.ts.
    const queues = Object.entries(resourcesOfType(template, 'AWS::SQS::Queue')).filter(([id]) => id.includes('DeadLetterQueue'));
    // The S3 triggers', the Account Updater's, the event publisher's, the scan results' and the two webhook queues'.
    expect(queues.map(([id]) => id.replace(/DeadLetterQueue.*$/, '')).sort()).toEqual(['AccountUpdater', 'DomainEvents', 'EventRuleTriggers', 'S3Triggers', 'WebhookQueuesWebhookDelivery', 'WebhookQueuesWebhookIntake']);
    const policies = Object.values(resourcesOfType(template, 'AWS::SQS::QueuePolicy'));
    const alarms = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm'));
    for (const [id, queue] of queues) {
      expect(queue.Properties, id).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
      const statements = policies.filter((policy) => JSON.stringify(policy.Properties.Queues).includes(`"${id}"`)).flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
      expect(statements.some((statement) => statement.Effect === 'Deny' && JSON.stringify(statement.Condition) === '{"Bool":{"aws:SecureTransport":"false"}}'), id).toBe(true);
      const depth = alarms.filter((alarm) => alarm.Properties.MetricName === 'ApproximateNumberOfMessagesVisible' && JSON.stringify(alarm.Properties.Dimensions).includes(`"${id}"`));
      expect(depth, id).toHaveLength(1);
    }
  });

  it("does not count the authorizer's refusals (it throws 'Unauthorized' for API Gateway's 401) as its errors", () => {
    const alarms = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm'));
    const authorizer = alarms.find((alarm) => alarm.Properties.AlarmName === 'PaymentsApi-prod-authorizer-errors')!;
    const metrics = authorizer.Properties.Metrics as Array<{ Id: string; Expression?: string; MetricStat?: { Metric: { MetricName: string } } }>;
    expect(metrics.find((metric) => metric.Expression)?.Expression).toBe('FILL(errors, 0) - FILL(byDesign, 0)');
    expect(metrics.find((metric) => metric.Id === 'byDesign')?.MetricStat?.Metric.MetricName).toBe('AuthorizerUnauthorizedErrors');
    expect(metrics.find((metric) => metric.Id === 'errors')?.MetricStat?.Metric.MetricName).toBe('Errors');
    // Every other function's errors alarm counts all its errors.
    const others = alarms.filter((alarm) => String(alarm.Properties.AlarmName).endsWith('-errors') && alarm !== authorizer);
    for (const alarm of others) expect(alarm.Properties.MetricName, String(alarm.Properties.AlarmName)).toBe('Errors');
  });

  it('alarms on the API, every function, DynamoDB and the hooks, all to the topic', () => {
    const functionNames = ['authorizer', ...fixtureRoutes.map((route) => route.handler), ...s3Triggers.map((trigger) => trigger.handler), 'au-check', 'au-chunk', 'au-merge', 'au-export', ...streamTriggers.map((trigger) => trigger.handler), ...eventRuleTriggers.map((trigger) => trigger.handler), ...WEBHOOK_QUEUE_TRIGGERS.map((trigger) => trigger.handler)];
    expect(alarmNames(template)).toEqual([
      'PaymentsApi-prod-api-5xx-rate',
      'PaymentsApi-prod-api-p99-latency',
      ...throttleAlarmNames(),
      'PaymentsApi-prod-s3-event-dlq-depth',
      'PaymentsApi-prod-au-dlq-depth',
      'PaymentsApi-prod-au-export-failure',
      'PaymentsApi-prod-au-apply-failure',
      'PaymentsApi-prod-au-history-throttles',
      'PaymentsApi-prod-events-dlq-depth',
      'PaymentsApi-prod-scan-result-dlq-depth',
      'PaymentsApi-prod-document-scan-failure',
      'PaymentsApi-prod-webhook-delivery-dlq-depth',
      'PaymentsApi-prod-webhook-intake-dlq-depth',
      'PaymentsApi-prod-webhook-intake-oldest-message',
      'PaymentsApi-prod-webhook-deliveries-throttles',
      ...streamTriggers.map((trigger) => `PaymentsApi-prod-${trigger.handler}-iterator-age`),
      ...functionNames.flatMap((name) => [`PaymentsApi-prod-${name}-errors`, `PaymentsApi-prod-${name}-throttles`]),
    ].sort());
    const topic = { Ref: Object.keys(resourcesOfType(template, 'AWS::SNS::Topic'))[0] };
    for (const alarm of Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm'))) {
      expect(alarm.Properties.AlarmActions, String(alarm.Properties.AlarmName)).toEqual([topic]);
      // The webhook alarms point at the webhook guide's own runbook section.
      expect(alarm.Properties.AlarmDescription, String(alarm.Properties.AlarmName)).toMatch(/Runbook: docs\/(operations|webhooks)\.md#/);
    }
  });

  it('alarms on an Account Updater run that failed, timed out or was aborted: the apply state machine\'s executions', () => {
    const alarm = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm')).find((candidate) => candidate.Properties.AlarmName === 'PaymentsApi-prod-au-apply-failure')!;
    expect(alarm.Properties).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', EvaluationPeriods: 1, TreatMissingData: 'notBreaching' });
    const metrics = alarm.Properties.Metrics as Array<{ Id: string; Expression?: string; MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: Array<{ Name: string; Value: unknown }> }; Stat: string; Period: number } }>;
    expect(metrics.find((metric) => metric.Expression)?.Expression).toBe('FILL(failed, 0) + FILL(timedOut, 0) + FILL(aborted, 0)');
    const machine = Object.keys(resourcesOfType(template, 'AWS::StepFunctions::StateMachine')).find((id) => id.startsWith('AccountUpdaterApplyStateMachine'))!;
    const stats = metrics.filter((metric) => metric.MetricStat).map(({ Id, MetricStat }) => [Id, MetricStat!.Metric.Namespace, MetricStat!.Metric.MetricName, MetricStat!.Stat, MetricStat!.Period]);
    expect(stats.sort()).toEqual([
      ['aborted', 'AWS/States', 'ExecutionsAborted', 'Sum', 300],
      ['failed', 'AWS/States', 'ExecutionsFailed', 'Sum', 300],
      ['timedOut', 'AWS/States', 'ExecutionsTimedOut', 'Sum', 300],
    ]);
    // The parent's ARN: a Map Run's child executions (one per batch) count under `<machine>/<run>`, not here.
    for (const metric of metrics.filter((candidate) => candidate.MetricStat)) expect(metric.MetricStat!.Metric.Dimensions).toEqual([{ Name: 'StateMachineArn', Value: { Ref: machine } }]);
  });

  it('alarms on the API 5xx rate and p99 latency with the prod thresholds', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'PaymentsApi-prod-api-p99-latency',
      Threshold: 2000,
      ExtendedStatistic: 'p99',
      MetricName: 'Latency',
      Namespace: 'AWS/ApiGateway',
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'PaymentsApi-prod-api-5xx-rate',
      Threshold: 1,
      Metrics: Match.arrayWith([Match.objectLike({ Expression: 'IF(requests >= 20, 100 * errors / requests, 0)' })]),
    });
  });

  it('alarms on read and write throttles of the table and each index', () => {
    const names = new Set(throttleAlarmNames());
    const metrics = JSON.stringify(Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm'))
      .filter((candidate) => names.has(String(candidate.Properties.AlarmName)))
      .map((alarm) => alarm.Properties.Metrics));
    const scopes = 1 + GLOBAL_SECONDARY_INDEXES.length;
    expect(metrics.match(/ReadThrottleEvents/g)).toHaveLength(scopes);
    expect(metrics.match(/WriteThrottleEvents/g)).toHaveLength(scopes);
    for (const { indexName } of GLOBAL_SECONDARY_INDEXES) expect(metrics).toContain(`"Value":"${indexName}"`);
  });

  it('retains data on cdk destroy and protects the table', () => {
    for (const type of ['AWS::DynamoDB::Table', 'AWS::KMS::Key', 'AWS::S3::Bucket', 'AWS::Logs::LogGroup', 'AWS::SQS::Queue']) {
      for (const resource of Object.values(template.findResources(type))) {
        expect(resource.DeletionPolicy, type).toBe('Retain');
        expect(resource.UpdateReplacePolicy, type).toBe('Retain');
      }
    }
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      DeletionProtectionEnabled: true,
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
  });
});

describe('environment settings from cdk.json', () => {
  it('reads dev and prod, and refuses unknown or invalid environments', () => {
    expect(settings('dev')).toMatchObject({ name: 'dev', responseEnvironment: 'sandbox', alarms: { enabled: false }, reservedConcurrency: {} });
    expect(settings('prod')).toMatchObject({ name: 'prod', responseEnvironment: 'live', deletionProtection: true, alarms: { enabled: true } });
    expect(() => environmentSettings('staging', { dev: {} })).toThrow(/Unknown environment "staging"; expected one of: dev/);
    expect(() => environmentSettings('dev', { dev: { logRetentionDays: 15 } })).toThrow(/logRetentionDays: must be a CloudWatch Logs retention value/);
    expect(() => environmentSettings('dev', { dev: { ...rawSettings('dev'), authorizerCacheTtlSeconds: 31 } })).toThrow(/authorizerCacheTtlSeconds: must be at most 30/);
    expect(environmentSettings('dev', { dev: { ...rawSettings('dev'), authorizerCacheTtlSeconds: 0 } }).authorizerCacheTtl.toSeconds()).toBe(0);
  });

  it('takes role ARNs for the reports bucket, none by default, and refuses anything else, naming the setting', () => {
    const withoutLists = Object.fromEntries(Object.entries(rawSettings('dev')).filter(([key]) => key !== 'reportsInboxWriters' && key !== 'reportsReaders'));
    expect(environmentSettings('dev', { dev: withoutLists })).toMatchObject({ reportsInboxWriters: [], reportsReaders: [] });
    const writer = 'arn:aws:iam::111122223333:role/card-network-delivery';
    const reader = 'arn:aws:iam::123456789012:role/finance/reports-reader';
    expect(environmentSettings('dev', { dev: { ...rawSettings('dev'), reportsInboxWriters: [writer], reportsReaders: [reader] } })).toMatchObject({ reportsInboxWriters: [writer], reportsReaders: [reader] });
    const invalid = (setting: Record<string, unknown>) => () => environmentSettings('dev', { dev: { ...rawSettings('dev'), ...setting } });
    expect(invalid({ reportsReaders: [reader, 'finance'] })).toThrow(/Invalid settings for environment "dev": reportsReaders\.1: must be an IAM role ARN/);
    expect(invalid({ reportsInboxWriters: ['arn:aws:iam::111122223333:user/alice'] })).toThrow(/reportsInboxWriters\.0: must be an IAM role ARN/);
    expect(invalid({ reportsInboxWriters: writer })).toThrow(/reportsInboxWriters: /);
  });

  it('takes an alarm e-mail from -c alarmEmail and subscribes it', () => {
    const environments = { dev: { ...rawSettings('dev') } };
    expect(environmentSettings('dev', environments, { alarmEmail: 'oncall@example.com' }).alarms.email).toBe('oncall@example.com');
    const template = synthesize({ ...settings('dev'), alarms: { ...settings('dev').alarms, email: 'oncall@example.com' } }, { routes: [], functionsDir });
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'oncall@example.com' });
  }, SYNTH_TIMEOUT_MS);
});

describe('the metrics the middleware emits are the ones the dashboard and alarms read', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('writes EMF with the namespace, dimensions and names of the catalog', async () => {
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const previous = { ...process.env };
    Object.assign(process.env, { ENVIRONMENT_NAME: 'sandbox', POWERTOOLS_METRICS_DISABLED: 'false' });
    try {
      const { recordRequest, recordBusinessMetric } = await import('#shared/observability/metrics.ts');
      recordRequest({ route: 'paymethods-create', statusCode: 503, durationMs: 12 });
      recordBusinessMetric('PaymethodsCreated', 1, { paymethod_type: 'card' });
      expect(() => recordBusinessMetric('PaymethodsCreated', 1, { organization_id: 'org_1' } as never)).toThrow(/no dimension organization_id/);
    } finally {
      process.env = previous;
    }
    const emf = lines.map((line) => JSON.parse(line) as Record<string, unknown> & { _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][] }[] } });
    expect(emf[0]).toMatchObject({ service: SERVICE_NAME, environment: 'sandbox', route: 'paymethods-create', Requests: 1, ClientErrors: 0, ServerErrors: 1, Latency: 12 });
    expect(emf[0]!._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: METRICS_NAMESPACE, Dimensions: [['service', 'environment', 'route']] });
    expect(emf[1]).toMatchObject({ PaymethodsCreated: 1, paymethod_type: 'card', environment: 'sandbox' });
    expect(emf[1]!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'environment', 'paymethod_type']]);
  });
});

function rawSettings(name: string): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: { environments: Record<string, Record<string, unknown>> } };
  return cdkJson.context.environments[name]!;
}

/** Read and write throttles of the table and every index, ten metrics to an alarm (CloudWatch's limit). */
function throttleAlarmNames(): string[] {
  const groups = Math.ceil((2 * (1 + GLOBAL_SECONDARY_INDEXES.length)) / 10);
  return Array.from({ length: groups }, (_, group) => (group === 0 ? 'PaymentsApi-prod-dynamodb-throttles' : `PaymentsApi-prod-dynamodb-throttles-${group + 1}`));
}
