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
import { actionsOf, environmentOf, resourcesOfType, roleStatements, settings } from './template-helpers.ts';

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
  let ingest: string;
  let exporter: string;
  let bucket: string;
  let reportsKey: string;
  let vaultKey: string;
  let queue: string;
  beforeAll(() => {
    template = synthesize();
    ingest = idOf(template, 'AWS::Lambda::Function', 'AccountUpdaterIngestFunction');
    exporter = idOf(template, 'AWS::Lambda::Function', 'AccountUpdaterExportFunction');
    bucket = idOf(template, 'AWS::S3::Bucket', 'AccountUpdaterReportsBucket');
    reportsKey = idOf(template, 'AWS::KMS::Key', 'AccountUpdaterReportsKey');
    vaultKey = idOf(template, 'AWS::KMS::Key', 'VaultKey');
    queue = idOf(template, 'AWS::SQS::Queue', 'AccountUpdaterDeadLetterQueue');
  }, 60_000);

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

  it('runs both jobs for up to 15 minutes with 1 GB, with only the configuration each needs', () => {
    for (const id of [ingest, exporter]) {
      expect(resourcesOfType(template, 'AWS::Lambda::Function')[id]!.Properties).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], Timeout: 900, MemorySize: 1024 });
    }
    const common = ['ENVIRONMENT_NAME', 'NODE_OPTIONS', 'POWERTOOLS_METRICS_NAMESPACE', 'POWERTOOLS_SERVICE_NAME', 'REPORTS_BUCKET', 'TABLE_NAME'];
    expect(Object.keys(environmentOf(template, ingest)).sort()).toEqual([...common, 'VAULT_KEY_ID'].sort());
    expect(Object.keys(environmentOf(template, exporter)).sort()).toEqual(common);
  });

  it('lets only the ingest function use the vault key, within the vault encryption context', () => {
    const ingestStatements = roleStatements(template, ingest);
    const onVault = ingestStatements.filter((statement) => mentions(statement, vaultKey));
    expect(actionsOf(onVault)).toEqual(['kms:Decrypt', 'kms:GenerateDataKey']);
    for (const statement of onVault) expect(statement.Condition).toEqual({ StringEquals: { 'kms:EncryptionContext:purpose': 'paymethod-vault' } });
    expect(roleStatements(template, exporter).filter((statement) => mentions(statement, vaultKey))).toEqual([]);
  });

  it('grants table, bucket and reports-key actions per function, S3 scoped to its prefixes', () => {
    const byResource = (statements: Statement[], id: string) => actionsOf(statements.filter((statement) => mentions(statement, id)));
    const ingestStatements = roleStatements(template, ingest);
    const exportStatements = roleStatements(template, exporter);
    const table = idOf(template, 'AWS::DynamoDB::Table', 'Table');
    expect(byResource(ingestStatements, table)).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
    expect(byResource(exportStatements, table)).toEqual(['dynamodb:Query']);
    const s3 = (statements: Statement[]) =>
      statements.filter((statement) => mentions(statement, bucket)).map((statement) => [actionsOf([statement]), JSON.stringify(statement.Resource).match(/\/(au-[a-z]+\/)\*/)?.[1]]);
    expect(s3(ingestStatements)).toEqual([[['s3:GetObject'], 'au-inbox/'], [['s3:PutObject'], 'au-results/']]);
    expect(s3(exportStatements)).toEqual([[['s3:AbortMultipartUpload', 's3:PutObject'], 'au-reports/']]);
    for (const statements of [ingestStatements, exportStatements]) {
      const onReportsKey = statements.filter((statement) => mentions(statement, reportsKey));
      expect(actionsOf(onReportsKey)).toEqual(['kms:Decrypt', 'kms:GenerateDataKey']);
      for (const statement of onReportsKey) expect(JSON.stringify(statement.Condition)).toContain('kms:ViaService');
    }
  });

  it('invokes ingest for .csv files under au-inbox/ only', () => {
    const notifications = Object.values(resourcesOfType(template, 'Custom::S3BucketNotifications'));
    expect(notifications).toHaveLength(1);
    expect(notifications[0]!.Properties).toMatchObject({
      BucketName: { Ref: bucket },
      NotificationConfiguration: {
        LambdaFunctionConfigurations: [{
          Events: ['s3:ObjectCreated:*'],
          Filter: { Key: { FilterRules: expect.arrayContaining([{ Name: 'prefix', Value: 'au-inbox/' }, { Name: 'suffix', Value: '.csv' }]) } },
          LambdaFunctionArn: arnOf(ingest),
        }],
      },
    });
  });

  it('exports at 06:00 UTC on day 1 by default, retrying twice, then into the dead-letter queue', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'cron(0 6 1 * ? *)',
      Targets: [Match.objectLike({ Arn: arnOf(exporter), RetryPolicy: Match.objectLike({ MaximumRetryAttempts: 2 }), DeadLetterConfig: { Arn: arnOf(queue) } })],
    });
    for (const id of [ingest, exporter]) {
      template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
        FunctionName: { Ref: id },
        MaximumRetryAttempts: 2,
        DestinationConfig: { OnFailure: { Destination: arnOf(queue) } },
      });
    }
    template.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
  });

  // The alarm on the dead-letter queue's depth comes from the stack's monitoring (test/infra/operations.test.ts).

  it('takes the schedule from the auExportSchedule context', () => {
    synthesize({ auExportSchedule: 'cron(30 2 1 * ? *)' }).hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'cron(30 2 1 * ? *)' });
  }, 60_000);
});
