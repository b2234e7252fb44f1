import { Duration, Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction as LambdaTarget } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey, Key } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { BlockPublicAccess, Bucket, BucketEncryption, EventType, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { LambdaDestination } from 'aws-cdk-lib/aws-s3-notifications';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { join } from 'node:path';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { EnvironmentSettings } from './environments.ts';
import { serviceFunction } from './functions.ts';
import { grantKeyUsage, scopedKey } from './keys.ts';

export interface AccountUpdaterProps {
  readonly environment: EnvironmentSettings;
  readonly projectRoot: string;
  readonly functionsDir: string;
  readonly table: ITable;
  /** The paymethod vault key: the ingest function seals new numbers with it (and opens stored ones to compare). */
  readonly vaultKey: IKey;
  /** New numbers get a new fingerprint. */
  readonly fingerprintKey: IKey;
  /** EventBridge schedule expression; default from the `auExportSchedule` context, else 06:00 UTC on day 1. */
  readonly exportSchedule?: string;
  /** Server access logs of the reports bucket go here, beside the documents bucket's. */
  readonly accessLogs: IBucket;
}

export const DEFAULT_EXPORT_SCHEDULE = 'cron(0 6 1 * ? *)';
const INBOX = 'au-inbox/';
const RESULTS = 'au-results/';
const REPORTS = 'au-reports/';
/** One invocation must finish a 100,000-row file: Lambda's ceiling, and memory for the SDK's buffers. */
const JOB_TIMEOUT = Duration.minutes(15);
const JOB_MEMORY_MB = 1024;

/**
 * The Account Updater in AWS: the reports bucket, the ingest function (S3
 * ObjectCreated on `au-inbox/**.csv`), the monthly export on a schedule, and
 * a dead-letter queue for runs that failed after their retries (the stack's
 * monitoring alarms on its depth and on export failures).
 *
 * Grants are per prefix and per key: only ingest may use the vault key (to
 * seal new numbers, and to open a stored number whose last four match, to
 * tell a re-applied row from a new one); the export never touches it.
 */
export class AccountUpdater extends Construct {
  readonly reports: Bucket;
  readonly reportsKey: Key;
  readonly ingestFunction: LambdaFunction;
  readonly exportFunction: LambdaFunction;
  readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: AccountUpdaterProps) {
    super(scope, id);
    const { environment } = props;

    // Its own key: update files carry card numbers in the clear, reports do not; neither shares the vault key.
    this.reportsKey = scopedKey(this, 'ReportsKey', {
      description: `Payments ${environment.name}: Account Updater files and reports at rest`,
      enableKeyRotation: true,
      removalPolicy: environment.removalPolicy,
    });
    this.reports = new Bucket(this, 'ReportsBucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      encryption: BucketEncryption.KMS,
      encryptionKey: this.reportsKey,
      bucketKeyEnabled: true,
      enforceSSL: true,
      versioned: true,
      lifecycleRules: [
        // Update files hold clear card numbers: keep them only as long as a re-run may need them.
        { id: 'inbox', prefix: INBOX, expiration: Duration.days(7), noncurrentVersionExpiration: Duration.days(1) },
        { id: 'results', prefix: RESULTS, expiration: Duration.days(400) },
        // Reports are kept about 13 months, like the history they are built from.
        { id: 'reports', prefix: REPORTS, expiration: Duration.days(400) },
        { id: 'versions', noncurrentVersionExpiration: Duration.days(30), abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      serverAccessLogsBucket: props.accessLogs,
      serverAccessLogsPrefix: 'reports-bucket/',
      removalPolicy: environment.removalPolicy,
    });

    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.ingestFunction = this.job('IngestFunction', 'au-ingest', 'Account Updater: apply a CSV from au-inbox/', props);
    this.exportFunction = this.job('ExportFunction', 'au-export', 'Account Updater: monthly export to au-reports/', props);

    const { ingestFunction: ingest, exportFunction: exporter } = this;
    const table = props.table.tableArn;
    ingest.addEnvironment('VAULT_KEY_ID', props.vaultKey.keyArn);
    ingest.addToRolePolicy(new PolicyStatement({ actions: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'], resources: [table] }));
    // Sealing (GenerateDataKey) and opening (Decrypt), only under the vault's own encryption context.
    grantKeyUsage(props.vaultKey, ingest, ['kms:GenerateDataKey', 'kms:Decrypt'], {
      StringEquals: { 'kms:EncryptionContext:purpose': 'paymethod-vault' },
    });
    // A new number gets a new fingerprint.
    ingest.addEnvironment('FINGERPRINT_KEY_ID', props.fingerprintKey.keyArn);
    grantKeyUsage(props.fingerprintKey, ingest, ['kms:GenerateMac']);
    ingest.addToRolePolicy(new PolicyStatement({ actions: ['s3:GetObject'], resources: [this.reports.arnForObjects(`${INBOX}*`)] }));
    ingest.addToRolePolicy(new PolicyStatement({ actions: ['s3:PutObject'], resources: [this.reports.arnForObjects(`${RESULTS}*`)] }));
    this.grantReportsKeyViaS3(ingest, ['kms:Decrypt', 'kms:GenerateDataKey']);

    exporter.addToRolePolicy(new PolicyStatement({ actions: ['dynamodb:Query'], resources: [table] }));
    exporter.addToRolePolicy(new PolicyStatement({ actions: ['s3:PutObject', 's3:AbortMultipartUpload'], resources: [this.reports.arnForObjects(`${REPORTS}*`)] }));
    // A multipart upload to an SSE-KMS bucket needs Decrypt too (S3 reads the parts' data keys to complete it).
    this.grantReportsKeyViaS3(exporter, ['kms:GenerateDataKey', 'kms:Decrypt']);

    this.reports.addEventNotification(EventType.OBJECT_CREATED, new LambdaDestination(ingest), { prefix: INBOX, suffix: '.csv' });

    const schedule = props.exportSchedule ?? (this.node.tryGetContext('auExportSchedule') as string | undefined) ?? DEFAULT_EXPORT_SCHEDULE;
    new Rule(this, 'ExportSchedule', {
      description: 'Account Updater: export the previous month',
      schedule: Schedule.expression(schedule),
      // Delivery failures go to the same queue; run failures are retried by Lambda (below).
      targets: [new LambdaTarget(exporter, { retryAttempts: 2, maxEventAge: Duration.hours(2), deadLetterQueue: this.deadLetterQueue })],
    });
  }

  private job(id: string, handler: string, description: string, props: AccountUpdaterProps): LambdaFunction {
    const fn = serviceFunction(this, id, {
      name: handler,
      entry: join(props.functionsDir, `${handler}.ts`),
      description,
      environment: props.environment,
      projectRoot: props.projectRoot,
      timeout: JOB_TIMEOUT,
      memorySize: JOB_MEMORY_MB,
    });
    fn.addEnvironment('TABLE_NAME', props.table.tableName);
    fn.addEnvironment('REPORTS_BUCKET', this.reports.bucketName);
    // Asynchronous invocations (S3, EventBridge): two retries, then the dead-letter queue.
    fn.configureAsyncInvoke({ retryAttempts: 2, maxEventAge: Duration.hours(6), onFailure: new SqsDestination(this.deadLetterQueue) });
    return fn;
  }

  private grantReportsKeyViaS3(fn: LambdaFunction, actions: string[]): void {
    grantKeyUsage(this.reportsKey, fn, actions, { StringEquals: { 'kms:ViaService': `s3.${Stack.of(this).region}.amazonaws.com` } });
  }
}
