import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AttributeType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { AccountUpdater } from '#infra/account-updater.ts';
import type { Statement } from './template-helpers.ts';
import { actionsOf, environmentOf, keyGrantsTheKeyIgnores, resourcesOfType, roleStatements, settings } from './template-helpers.ts';

const functionsDir = fileURLToPath(new URL('./fixtures/functions', import.meta.url));
const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };

function synthesize(context: Record<string, unknown> = {}): Template {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], ...context } });
  const stack = new Stack(app, 'AccountUpdaterTest');
  const table = new Table(stack, 'Table', { partitionKey: { name: 'pk', type: AttributeType.STRING }, sortKey: { name: 'sk', type: AttributeType.STRING } });
  const vaultKey = new Key(stack, 'VaultKey');
  const fingerprintKey = new Key(stack, 'FingerprintKey');
  const accessLogs = new Bucket(stack, 'AccessLogs');
  new AccountUpdater(stack, 'AccountUpdater', { environment: settings('dev'), projectRoot, functionsDir, table, vaultKey, fingerprintKey, accessLogs });
  return Template.fromStack(stack);
}

const idOf = (template: Template, type: string, prefix: string) => {
  const ids = Object.keys(resourcesOfType(template, type)).filter((id) => id.startsWith(prefix));
  expect(ids, `${type} ${prefix}`).toHaveLength(1);
  return ids[0]!;
};
const arnOf = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
const mentions = (statement: Statement, id: string) => JSON.stringify(statement.Resource).includes(`"${id}"`);

describe('AccountUpdater construct', () => {
  let template: Template;
  let check: string;
  let chunk: string;
  let merge: string;
  let exporter: string;
  let machine: string;
  let bucket: string;
  let reportsKey: string;
  let vaultKey: string;
  let queue: string;
  beforeAll(() => {
    template = synthesize();
    check = idOf(template, 'AWS::Lambda::Function', 'AccountUpdaterCheckFunction');
    chunk = idOf(template, 'AWS::Lambda::Function', 'AccountUpdaterChunkFunction');
    merge = idOf(template, 'AWS::Lambda::Function', 'AccountUpdaterMergeFunction');
    exporter = idOf(template, 'AWS::Lambda::Function', 'AccountUpdaterExportFunction');
    machine = idOf(template, 'AWS::StepFunctions::StateMachine', 'AccountUpdaterApplyStateMachine');
    bucket = idOf(template, 'AWS::S3::Bucket', 'AccountUpdaterReportsBucket');
    reportsKey = idOf(template, 'AWS::KMS::Key', 'AccountUpdaterReportsKey');
    vaultKey = idOf(template, 'AWS::KMS::Key', 'VaultKey');
    queue = idOf(template, 'AWS::SQS::Queue', 'AccountUpdaterDeadLetterQueue');
  }, 180_000);

  it('keeps the reports bucket private, versioned, SSE-KMS with its own rotating key, TLS-only, with lifecycle rules', () => {
    template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    expect(resourcesOfType(template, 'AWS::S3::Bucket')[bucket]!.Properties).toMatchObject({
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ BucketKeyEnabled: true, ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: arnOf(reportsKey) } }] },
      VersioningConfiguration: { Status: 'Enabled' },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      LifecycleConfiguration: {
        Rules: expect.arrayContaining([
          expect.objectContaining({ Prefix: 'au-inbox/', ExpirationInDays: 7, NoncurrentVersionExpiration: { NoncurrentDays: 1 } }),
          expect.objectContaining({ Prefix: 'au-runs/', ExpirationInDays: 7, NoncurrentVersionExpiration: { NoncurrentDays: 1 } }),
          expect.objectContaining({ Prefix: 'au-results/', ExpirationInDays: 400 }),
          expect.objectContaining({ Prefix: 'au-reports/', ExpirationInDays: 400 }),
          expect.objectContaining({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, NoncurrentVersionExpiration: { NoncurrentDays: 30 } }),
        ]),
      },
    });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucket },
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
  });

  it('gives each step its own function, with only the configuration it needs', () => {
    const functions = resourcesOfType(template, 'AWS::Lambda::Function');
    for (const id of [check, chunk, merge]) expect(functions[id]!.Properties).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], Timeout: 300, MemorySize: 1024 });
    expect(functions[exporter]!.Properties).toMatchObject({ Timeout: 900, MemorySize: 1024 });
    const common = ['ENVIRONMENT_NAME', 'POWERTOOLS_METRICS_NAMESPACE', 'POWERTOOLS_SERVICE_NAME', 'REPORTS_BUCKET'];
    expect(Object.keys(environmentOf(template, chunk)).sort()).toEqual([...common, 'TABLE_NAME', 'AU_HISTORY_TABLE_NAME', 'FINGERPRINT_KEY_ID', 'VAULT_KEY_ID'].sort());
    expect(Object.keys(environmentOf(template, exporter)).sort()).toEqual([...common, 'TABLE_NAME', 'AU_HISTORY_TABLE_NAME'].sort());
    // The check and the merge never read the paymethod table: no name of it, as no grant on it.
    expect(Object.keys(environmentOf(template, check)).sort()).toEqual([...common, 'AU_HISTORY_TABLE_NAME'].sort());
    expect(Object.keys(environmentOf(template, merge)).sort()).toEqual(common);
  });

  it('keeps the history in its own table: keys and TTL, no index, no stream, point-in-time recovery', () => {
    const history = resourcesOfType(template, 'AWS::DynamoDB::Table')[idOf(template, 'AWS::DynamoDB::Table', 'AccountUpdaterHistoryTable')]!;
    expect(history.Properties).toMatchObject({
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
      SSESpecification: { SSEEnabled: true },
    });
    // A million history items per run are not changes of records: the event publisher never sees them.
    expect(history.Properties.StreamSpecification).toBeUndefined();
    expect(history.Properties.GlobalSecondaryIndexes).toBeUndefined();
  });

  it('backs in the reports key policy every KMS action its IAM policies let a role use on that key: the state machine reads and writes through it', () => {
    expect(keyGrantsTheKeyIgnores(template)).toEqual([]);
    const reportsKey = idOf(template, 'AWS::KMS::Key', 'AccountUpdaterReportsKey');
    const machineRole = idOf(template, 'AWS::IAM::Role', 'AccountUpdaterApplyStateMachineRole');
    const onKey = (resourcesOfType(template, 'AWS::KMS::Key')[reportsKey]!.Properties.KeyPolicy as { Statement: Statement[] }).Statement.filter((statement) => JSON.stringify(statement.Principal).includes(`"${machineRole}"`));
    expect(actionsOf(onKey)).toEqual(['kms:Decrypt', 'kms:GenerateDataKey']);
    for (const statement of onKey) expect(JSON.stringify(statement.Condition)).toContain('kms:ViaService');
  });

  it('lets only the chunk function use the vault key, within the vault encryption context', () => {
    const onVault = roleStatements(template, chunk).filter((statement) => mentions(statement, vaultKey));
    expect(actionsOf(onVault)).toEqual(['kms:Decrypt', 'kms:GenerateDataKey']);
    for (const statement of onVault) expect(statement.Condition).toEqual({ StringEquals: { 'kms:EncryptionContext:purpose': 'paymethod-vault' } });
    for (const id of [check, merge, exporter]) expect(roleStatements(template, id).filter((statement) => mentions(statement, vaultKey))).toEqual([]);
  });

  it('lets only the chunk function fingerprint new numbers (GenerateMac on the fingerprint key)', () => {
    const fingerprintKey = idOf(template, 'AWS::KMS::Key', 'FingerprintKey');
    expect(actionsOf(roleStatements(template, chunk).filter((statement) => mentions(statement, fingerprintKey)))).toEqual(['kms:GenerateMac']);
    for (const id of [check, merge, exporter]) expect(roleStatements(template, id).filter((statement) => mentions(statement, fingerprintKey))).toEqual([]);
  });

  it('grants table, bucket and reports-key actions per function, S3 scoped to its prefixes', () => {
    const byResource = (statements: Statement[], id: string) => actionsOf(statements.filter((statement) => mentions(statement, id)));
    const table = idOf(template, 'AWS::DynamoDB::Table', 'Table');
    const history = idOf(template, 'AWS::DynamoDB::Table', 'AccountUpdaterHistoryTable');
    // Cards are only read and updated; history items and month markers go to the history table alone (read back only by a re-applied file, for its missing items).
    expect(byResource(roleStatements(template, chunk), table)).toEqual(['dynamodb:BatchGetItem', 'dynamodb:UpdateItem']);
    expect(byResource(roleStatements(template, chunk), history)).toEqual(['dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem', 'dynamodb:PutItem']);
    // The export reads the history table, and months written to the paymethod table before it existed.
    expect(byResource(roleStatements(template, exporter), history)).toEqual(['dynamodb:Query']);
    expect(byResource(roleStatements(template, exporter), table)).toEqual(['dynamodb:Query']);
    for (const id of [check, merge]) expect(byResource(roleStatements(template, id), table)).toEqual([]);
    // The check step records when each file was first applied; the merge touches neither table.
    expect(byResource(roleStatements(template, check), history)).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem']);
    expect(byResource(roleStatements(template, merge), history)).toEqual([]);
    for (const id of [chunk, exporter, check]) expect(environmentOf(template, id).AU_HISTORY_TABLE_NAME).toEqual({ Ref: history });
    expect(environmentOf(template, merge).AU_HISTORY_TABLE_NAME).toBeUndefined();
    const s3 = (id: string) =>
      roleStatements(template, id)
        .filter((statement) => mentions(statement, bucket))
        .map((statement) => [actionsOf([statement]), [...JSON.stringify(statement.Resource).matchAll(/\/(au-[a-z]+\/)\*/g)].map((match) => match[1])]);
    expect(s3(check)).toEqual([[['s3:GetObject', 's3:GetObjectVersion'], ['au-inbox/', 'au-runs/']], [['s3:PutObject'], ['au-results/', 'au-runs/']]]);
    expect(s3(chunk)).toEqual([[['s3:PutObject'], ['au-runs/']]]);
    expect(s3(merge)).toEqual([[['s3:ListBucket'], []], [['s3:GetObject'], ['au-runs/']], [['s3:AbortMultipartUpload', 's3:PutObject'], ['au-results/', 'au-runs/']]]);
    expect(s3(exporter)).toEqual([[['s3:AbortMultipartUpload', 's3:PutObject'], ['au-reports/']]]);
    for (const id of [check, chunk, merge, exporter]) {
      for (const statement of roleStatements(template, id).filter((candidate) => mentions(candidate, reportsKey))) expect(JSON.stringify(statement.Condition)).toContain('kms:ViaService');
    }
  });

  it('starts the state machine for .csv files created under au-inbox/ (EventBridge), retrying, then the dead-letter queue', () => {
    const notifications = Object.values(resourcesOfType(template, 'Custom::S3BucketNotifications'));
    expect(notifications.map((notification) => notification.Properties)).toEqual([expect.objectContaining({ BucketName: { Ref: bucket }, NotificationConfiguration: { EventBridgeConfiguration: {} } })]);
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: ['aws.s3'], 'detail-type': ['Object Created'], detail: { bucket: { name: [{ Ref: bucket }] }, object: { key: [{ wildcard: 'au-inbox/*.csv' }] } } },
      Targets: [Match.objectLike({ Arn: { Ref: machine }, RetryPolicy: Match.objectLike({ MaximumRetryAttempts: 2 }), DeadLetterConfig: { Arn: arnOf(queue) } })],
    });
  });

  it('runs a Distributed Map over the CSV in batches, each retried alone, and logs no execution data', () => {
    const properties = resourcesOfType(template, 'AWS::StepFunctions::StateMachine')[machine]!.Properties as Record<string, unknown>;
    expect(properties).toMatchObject({ TracingConfiguration: { Enabled: true }, LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: false } });
    const definition = JSON.stringify(properties.DefinitionString);
    for (const fragment of ['"Mode\\":\\"DISTRIBUTED', '"InputType\\":\\"CSV', '"MaxItemsPerBatch\\":1000', '"MaxInputBytesPerBatch\\":253952', 'ToleratedFailurePercentage', 'ResultWriter']) expect(definition).toContain(fragment);
    const policies = Object.values(resourcesOfType(template, 'AWS::IAM::Policy')).filter((policy) => JSON.stringify(policy.Properties).includes('ApplyStateMachineRole'));
    const statements = policies.flatMap((policy) => (policy.Properties as { PolicyDocument: { Statement: Statement[] } }).PolicyDocument.Statement);
    expect(actionsOf(statements.filter((statement) => [check, chunk, merge].some((id) => mentions(statement, id))))).toEqual(['lambda:InvokeFunction']);
    // The ItemReader reads the file's version the check step read (VersionId), and nothing else of the inbox.
    expect(definition).toContain('"VersionId.$\\":\\"$.run.version_id');
    const onInbox = statements.filter((statement) => mentions(statement, bucket) && JSON.stringify(statement.Resource).includes('/au-inbox/*'));
    expect(actionsOf(onInbox)).toEqual(['s3:GetObject', 's3:GetObjectVersion']);
  });

  it('exports at 06:00 UTC on day 1 by default, retrying twice, then into the dead-letter queue', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'cron(0 6 1 * ? *)',
      Targets: [Match.objectLike({ Arn: arnOf(exporter), RetryPolicy: Match.objectLike({ MaximumRetryAttempts: 2 }), DeadLetterConfig: { Arn: arnOf(queue) } })],
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', { FunctionName: { Ref: exporter }, MaximumRetryAttempts: 2, DestinationConfig: { OnFailure: { Destination: arnOf(queue) } } });
    template.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
  });

  // The alarm on the dead-letter queue's depth comes from the stack's monitoring (test/infra/operations.test.ts).

  it('takes the schedule from the auExportSchedule context', () => {
    synthesize({ auExportSchedule: 'cron(30 2 1 * ? *)' }).hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'cron(30 2 1 * ? *)' });
  }, 60_000);
});
