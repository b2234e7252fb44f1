import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction as LambdaTarget, SfnStateMachine } from 'aws-cdk-lib/aws-events-targets';
import { ArnPrincipal, Effect, PolicyStatement, Role, ServicePrincipal, StarPrincipal } from 'aws-cdk-lib/aws-iam';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { CfnStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { accountUpdaterDefinition, RUNS_PREFIX } from '#shared/account-updater/state-machine.ts';
import { Construct } from 'constructs';
import { join } from 'node:path';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { bucketGrants } from '#shared/platform/bucket-grants.ts';
import { dynamodbGrants } from '#shared/platform/dynamodb-grants.ts';
import { BACKGROUND_FUNCTION_ACCESS } from '#shared/platform/function-environment.ts';
import { keyGrants } from '#shared/platform/key-grants.ts';
import type { AccountUpdaterFunction } from '#shared/platform/function-sizing.ts';
import { ACCOUNT_UPDATER_FUNCTION_SIZING } from '#shared/platform/function-sizing.ts';
import { REPORT_OBJECT_PREFIXES } from '#shared/platform/names.ts';
import { AU_HISTORY_TABLE_KEY } from '#shared/platform/table.ts';
import { deadLetterQueue } from './dead-letter-queue.ts';
import { grantBuckets, grantDynamo, grantKeys, setFunctionEnvironment } from './access.ts';
import { PRIVATE_BUCKET } from './environments.ts';
import { serviceFunction } from './functions.ts';
import type { FunctionSources } from './functions.ts';
import { grantKeyUsage, scopedKey } from './keys.ts';
import { plainTable } from './tables.ts';

export interface AccountUpdaterProps extends FunctionSources {
  readonly table: ITable;
  /** While an upgrade withholds new indexes: the retired ones the functions read in their place (table-indexes.ts). */
  readonly tableIndexStandIns?: string;
  /** The paymethod vault key: the chunk function seals new numbers with it (and opens stored ones to compare). */
  readonly vaultKey: IKey;
  /** New numbers get a new fingerprint. */
  readonly fingerprintKey: IKey;
  /** When the previous month is exported; default `DEFAULT_EXPORT_SCHEDULE`, 06:00 UTC on day 1. */
  readonly exportSchedule?: Schedule;
  /** A key of the team's for the reports bucket; default, one created here. */
  readonly reportsKey?: IKey;
  /** A key of the team's for the state machine's data; default, one created here. */
  readonly stateMachineKey?: IKey;
  /** Server access logs of the reports bucket go here, beside the documents bucket's. */
  readonly accessLogs: IBucket;
}

export const DEFAULT_EXPORT_SCHEDULE = 'cron(0 6 1 * ? *)';
/** How long Step Functions reuses a data key of the state machine's key: fewer KMS calls, each key still short-lived. */
export const STATE_MACHINE_DATA_KEY_REUSE_SECONDS = 300;
/** Vended log groups (Step Functions, API Gateway access logs and the like) named under it need no entry in the account's logs resource policy. */
export const STATE_MACHINE_LOG_GROUP_PREFIX = '/aws/vendedlogs/states/';
const { inbox: INBOX, results: RESULTS, reports: REPORTS } = REPORT_OBJECT_PREFIXES;
/** What reads an object's bytes (HeadObject is s3:GetObject too; a version by id, s3:GetObjectVersion). */
const OBJECT_READS = ['s3:GetObject', 's3:GetObjectVersion'];

/**
 * The Account Updater in AWS: the reports bucket; its history table (the
 * applied rows the monthly export reads: no index, no stream; see
 * shared/platform/table.ts); a file created under
 * `au-inbox/` (EventBridge) starts the apply state machine (check, a
 * Distributed Map of batches on the chunk function, merge; definition in
 * shared/account-updater/state-machine.ts, run locally by the same engine);
 * the monthly export on a schedule; a dead-letter queue for events and runs
 * that failed after their retries (the stack's monitoring alarms on its
 * depth and on export failures).
 *
 * No card number enters the state machine's data: its map hands out ranges
 * of lines, which the chunk function reads from S3 itself; that data is
 * encrypted with a key of its own all the same.
 *
 * Grants are per prefix and per key: only the chunk function may use the
 * vault key (to seal new numbers, and to open a stored number whose last
 * four match, to tell a re-applied row from a new one); nothing else does.
 * Outside the stack, only the roles the environment names may use the
 * bucket: writers deliver files to `au-inbox/`, readers read `au-results/`
 * and `au-reports/` (grantOutsideRoles).
 */
export class AccountUpdater extends Construct {
  readonly reports: Bucket;
  readonly historyTable: Table;
  readonly reportsKey: IKey;
  /** The state machine's data at rest: definition, execution inputs, outputs and history. */
  readonly stateMachineKey: IKey;
  readonly checkFunction: LambdaFunction;
  readonly chunkFunction: LambdaFunction;
  readonly mergeFunction: LambdaFunction;
  readonly exportFunction: LambdaFunction;
  readonly applyStateMachine: StateMachine;
  readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: AccountUpdaterProps) {
    super(scope, id);
    const { environment } = props;
    const stack = Stack.of(this);

    // Its own key: update files carry card numbers in the clear, reports do not; neither shares the vault key.
    this.reportsKey = props.reportsKey ?? scopedKey(this, 'ReportsKey', {
      description: `Payments ${environment.name}: Account Updater files and reports at rest`,
      enableKeyRotation: true,
      removalPolicy: environment.removalPolicy,
    });
    this.reports = new Bucket(this, 'ReportsBucket', {
      ...PRIVATE_BUCKET,
      encryption: BucketEncryption.KMS,
      encryptionKey: this.reportsKey,
      bucketKeyEnabled: true,
      // Object Created events go to EventBridge: the rule below starts the state machine.
      eventBridgeEnabled: true,
      lifecycleRules: [
        // Update files hold clear card numbers: keep them only as long as a re-run may need them.
        { id: 'inbox', prefix: INBOX, expiration: Duration.days(7), noncurrentVersionExpiration: Duration.days(1) },
        // Ranges, batch results, the Map's result files (no number in any) and au:apply's uploads (clear numbers): a week.
        { id: 'runs', prefix: RUNS_PREFIX, expiration: Duration.days(7), noncurrentVersionExpiration: Duration.days(1) },
        { id: 'results', prefix: RESULTS, expiration: Duration.days(400) },
        // Reports are kept about 13 months, like the history they are built from.
        { id: 'reports', prefix: REPORTS, expiration: Duration.days(400) },
        { id: 'versions', noncurrentVersionExpiration: Duration.days(30), abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      serverAccessLogsBucket: props.accessLogs,
      serverAccessLogsPrefix: 'reports-bucket/',
      removalPolicy: environment.removalPolicy,
    });
    this.grantOutsideRoles(environment.reportsInboxWriters, environment.reportsReaders);

    this.historyTable = plainTable(this, 'HistoryTable', AU_HISTORY_TABLE_KEY, environment);

    this.deadLetterQueue = deadLetterQueue(this, environment);
    this.checkFunction = this.job('CheckFunction', 'au-check', 'Account Updater: check a file before it is applied', props);
    this.chunkFunction = this.job('ChunkFunction', 'au-chunk', 'Account Updater: apply one batch of rows', props);
    this.mergeFunction = this.job('MergeFunction', 'au-merge', 'Account Updater: merge batch results into the summary', props);
    this.exportFunction = this.job('ExportFunction', 'au-export', 'Account Updater: monthly export to au-reports/', props);
    // Invoked by the state machine (synchronously, retried by its Retry policies); only the export is asynchronous.
    this.exportFunction.configureAsyncInvoke({ retryAttempts: 2, maxEventAge: Duration.hours(6), onFailure: new SqsDestination(this.deadLetterQueue) });

    const { checkFunction: check, chunkFunction: chunk, mergeFunction: merge, exportFunction: exporter } = this;
    const objects = (prefix: string) => this.reports.arnForObjects(`${prefix}*`);
    this.grantReportsKeyViaS3(check, ['kms:Decrypt', 'kms:GenerateDataKey']);

    // It reads its range of the update file, and writes its batch's result.
    this.grantReportsKeyViaS3(chunk, ['kms:Decrypt', 'kms:GenerateDataKey']);

    this.grantReportsKeyViaS3(merge, ['kms:Decrypt', 'kms:GenerateDataKey']);

    // A multipart upload to an SSE-KMS bucket needs Decrypt too (S3 reads the parts' data keys to complete it).
    this.grantReportsKeyViaS3(exporter, ['kms:GenerateDataKey', 'kms:Decrypt']);

    // The name is fixed so the role can name the machine (Distributed Map child executions) without a dependency cycle.
    const stateMachineName = `payments-${environment.name}-account-updater`;
    const machineArn = stack.formatArn({ service: 'states', resource: 'stateMachine', resourceName: stateMachineName, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
    const executionArns = stack.formatArn({ service: 'states', resource: 'execution', resourceName: `${stateMachineName}/*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
    // Its own key, though no card number is in the machine's data (the map hands out ranges of lines): the execution
    // history is readable by whoever may call GetExecutionHistory, and with this key only by those the key policy names too.
    this.stateMachineKey = props.stateMachineKey ?? scopedKey(this, 'StateMachineKey', {
      description: `Payments ${environment.name}: Account Updater state machine data at rest`,
      enableKeyRotation: true,
      removalPolicy: environment.removalPolicy,
    });
    const definition = accountUpdaterDefinition({ checkFunctionArn: check.functionArn, chunkFunctionArn: chunk.functionArn, mergeFunctionArn: merge.functionArn, reportsBucket: this.reports.bucketName });
    this.applyStateMachine = new StateMachine(this, 'ApplyStateMachine', {
      stateMachineName,
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromString(stack.toJsonString(definition)),
      tracingEnabled: true,
      // Execution data is never logged, though it holds no card number either: events only.
      // Under /aws/vendedlogs/: Step Functions delivers logs through CloudWatch Logs' vended delivery, which for any
      // other name adds the group to the account's one logs resource policy (5,120 characters, shared by every
      // group and stack); past that limit a first deploy fails. That prefix needs no resource policy entry.
      logs: {
        destination: new LogGroup(this, 'ApplyStateMachineLogs', { logGroupName: `${STATE_MACHINE_LOG_GROUP_PREFIX}${stateMachineName}`, retention: environment.logRetention, removalPolicy: environment.removalPolicy }),
        level: LogLevel.ALL,
        includeExecutionData: false,
      },
    });
    // Set on the resource rather than through CustomerManagedEncryptionConfiguration, whose grants go to IAM policies
    // only: the key trusts no one its own policy does not name, so every use is granted in both (grantKeyUsage).
    (this.applyStateMachine.node.defaultChild as CfnStateMachine).encryptionConfiguration = {
      type: 'CUSTOMER_MANAGED_KMS_KEY',
      kmsKeyId: this.stateMachineKey.keyArn,
      kmsDataKeyReusePeriodSeconds: STATE_MACHINE_DATA_KEY_REUSE_SECONDS,
    };
    const machineRole = this.applyStateMachine.role;
    // Step Functions encrypts and decrypts the machine's data (its own and its child executions') as the role, each
    // call naming the machine in the encryption context.
    const ofThisMachine = { StringEquals: { 'kms:EncryptionContext:aws:states:stateMachineArn': machineArn } };
    grantKeyUsage(this.stateMachineKey, machineRole, ['kms:Decrypt', 'kms:GenerateDataKey'], ofThisMachine);
    // Its log events are encrypted with the key too: data keys for CloudWatch Logs, which the log delivery service opens.
    grantKeyUsage(this.stateMachineKey, machineRole, ['kms:GenerateDataKey'], { StringEquals: { 'kms:EncryptionContext:SourceArn': stack.formatArn({ service: 'logs', resource: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME }) } });
    this.stateMachineKey.addToResourcePolicy(new PolicyStatement({ sid: 'LogDeliveryDecrypts', principals: [new ServicePrincipal('delivery.logs.amazonaws.com')], actions: ['kms:Decrypt'], resources: ['*'], conditions: { StringEquals: { 'aws:SourceAccount': stack.account } } }));
    for (const fn of [check, chunk, merge]) fn.grantInvoke(machineRole);
    machineRole.addToPrincipalPolicy(new PolicyStatement({ actions: ['states:StartExecution'], resources: [machineArn] }));
    machineRole.addToPrincipalPolicy(new PolicyStatement({ actions: ['states:DescribeExecution', 'states:StopExecution'], resources: [executionArns] }));
    // The ItemReader reads the run's ranges, the ResultWriter writes the Map's result files: both under au-runs/. The
    // machine reads nothing under au-inbox/: the update files, card numbers and all, are read by the functions alone.
    machineRole.addToPrincipalPolicy(new PolicyStatement({ actions: ['s3:PutObject', 's3:GetObject', 's3:ListMultipartUploadParts', 's3:AbortMultipartUpload'], resources: [objects(RUNS_PREFIX)] }));
    // Through S3, as the functions' grants: the ItemReader reads, and the ResultWriter writes, objects under the reports key,
    // which trusts nobody its own policy does not name (an IAM grant alone has no effect on it).
    this.grantReportsKeyViaS3(machineRole, ['kms:Decrypt', 'kms:GenerateDataKey']);

    // Starting an execution encrypts its input with the machine's key, as the caller.
    const inboxRuleRole = new Role(this, 'InboxRuleRole', { assumedBy: new ServicePrincipal('events.amazonaws.com') });
    grantKeyUsage(this.stateMachineKey, inboxRuleRole, ['kms:GenerateDataKey'], ofThisMachine);
    new Rule(this, 'InboxRule', {
      description: 'Account Updater: a CSV created under au-inbox/ starts the apply state machine',
      eventPattern: {
        source: ['aws.s3'],
        detailType: ['Object Created'],
        detail: { bucket: { name: [this.reports.bucketName] }, object: { key: [{ wildcard: `${INBOX}*.csv` }] } },
      },
      targets: [new SfnStateMachine(this.applyStateMachine, { role: inboxRuleRole, retryAttempts: 2, maxEventAge: Duration.hours(2), deadLetterQueue: this.deadLetterQueue })],
    });

    new Rule(this, 'ExportSchedule', {
      description: 'Account Updater: export the previous month',
      schedule: props.exportSchedule ?? Schedule.expression(DEFAULT_EXPORT_SCHEDULE),
      // Delivery failures go to the same queue; run failures are retried by Lambda (above).
      targets: [new LambdaTarget(exporter, { retryAttempts: 2, maxEventAge: Duration.hours(2), deadLetterQueue: this.deadLetterQueue })],
    });
  }

  private job(id: string, handler: AccountUpdaterFunction, description: string, props: AccountUpdaterProps): LambdaFunction {
    const fn = serviceFunction(this, id, {
      name: handler,
      entry: join(props.functionsDir, `${handler}.ts`),
      description,
      environment: props.environment,
      projectRoot: props.projectRoot,
      sizing: ACCOUNT_UPDATER_FUNCTION_SIZING[handler],
    });
    const access = BACKGROUND_FUNCTION_ACCESS[handler]!;
    grantDynamo(fn, dynamodbGrants(access), { table: props.table, tableIndexNames: [], auHistory: this.historyTable });
    grantKeys(fn, keyGrants(access), { vault: props.vaultKey, fingerprint: props.fingerprintKey });
    grantBuckets(fn, bucketGrants(access), { reports: this.reports });
    setFunctionEnvironment(fn, access, {
      tableName: props.table.tableName,
      tableIndexStandIns: props.tableIndexStandIns,
      auHistoryTableName: this.historyTable.tableName,
      reportsBucket: this.reports.bucketName,
      vaultKeyId: props.vaultKey.keyArn,
      fingerprintKeyId: props.fingerprintKey.keyArn,
    });
    return fn;
  }

  private grantReportsKeyViaS3(grantee: IGrantable, actions: string[]): void {
    grantKeyUsage(this.reportsKey, grantee, actions, this.viaS3());
  }

  private viaS3(): Record<string, Record<string, unknown>> {
    return { StringEquals: { 'kms:ViaService': `s3.${Stack.of(this).region}.amazonaws.com` } };
  }

  /**
   * The roles outside the stack that the environment names (`reportsInboxWriters`,
   * `reportsReaders`; of this account or another), each allowed in both resource
   * policies, the bucket's and the reports key's, so a role of another account
   * needs only its own IAM policy besides. Writers put objects under au-inbox/
   * (a .csv starts a run); readers get and list au-results/ and au-reports/. The
   * key backs that through S3 only: GenerateDataKey to write, Decrypt to read, and
   * Decrypt for writers too, which S3 needs to complete a multipart upload (the
   * AWS CLI uploads any file over 8 MB in parts; a million-row file is tens of MB).
   *
   * A key grant cannot be narrowed to a prefix (with the bucket key on, S3's
   * encryption context names the bucket, not the object), and a role of this
   * account may hold S3 actions from its own IAM policy, which the bucket policy's
   * Allows do not bound. So the bucket policy also denies these roles every other
   * object read and upload, whatever their IAM policies allow: writers read
   * nothing, readers upload nothing, neither reads au-inbox/ or au-runs/ (card
   * numbers in the clear) nor uploads outside au-inbox/. Empty lists add nothing.
   */
  private grantOutsideRoles(writers: readonly string[], readers: readonly string[]): void {
    const bucket = this.reports;
    const objects = (prefix: string) => bucket.arnForObjects(`${prefix}*`);
    const principals = (arns: readonly string[]) => arns.map((arn) => new ArnPrincipal(arn));
    // Sids keep these statements apart from the functions' (the minimizePolicies flag merges statements without one).
    if (writers.length) {
      bucket.addToResourcePolicy(new PolicyStatement({ sid: 'InboxWritersPut', principals: principals(writers), actions: ['s3:PutObject', 's3:AbortMultipartUpload'], resources: [objects(INBOX)] }));
      this.reportsKey.addToResourcePolicy(new PolicyStatement({ sid: 'InboxWritersViaS3', principals: principals(writers), actions: ['kms:GenerateDataKey', 'kms:Decrypt'], resources: ['*'], conditions: this.viaS3() }));
    }
    if (readers.length) {
      bucket.addToResourcePolicy(new PolicyStatement({ sid: 'ReportReadersGet', principals: principals(readers), actions: ['s3:GetObject'], resources: [objects(RESULTS), objects(REPORTS)] }));
      bucket.addToResourcePolicy(new PolicyStatement({ sid: 'ReportReadersList', principals: principals(readers), actions: ['s3:ListBucket'], resources: [bucket.bucketArn], conditions: { StringLike: { 's3:prefix': [`${RESULTS}*`, `${REPORTS}*`] } } }));
      this.reportsKey.addToResourcePolicy(new PolicyStatement({ sid: 'ReportReadersViaS3', principals: principals(readers), actions: ['kms:Decrypt'], resources: ['*'], conditions: this.viaS3() }));
    }
    const deny = (sid: string, arns: readonly string[], actions: string[], scope: { resources: string[] } | { notResources: string[] }) => {
      if (!arns.length) return;
      bucket.addToResourcePolicy(new PolicyStatement({ sid, effect: Effect.DENY, principals: [new StarPrincipal()], actions, ...scope, conditions: { ArnEquals: { 'aws:PrincipalArn': [...arns] } } }));
    };
    const named = [...new Set([...writers, ...readers])];
    deny('OutsideRolesReadOnlyResultsAndReports', named, OBJECT_READS, { notResources: [objects(RESULTS), objects(REPORTS)] });
    deny('InboxWritersReadNothing', writers.filter((arn) => !readers.includes(arn)), OBJECT_READS, { resources: [bucket.arnForObjects('*')] });
    deny('OutsideRolesPutOnlyToInbox', named, ['s3:PutObject'], { notResources: [objects(INBOX)] });
    deny('ReportReadersPutNothing', readers.filter((arn) => !writers.includes(arn)), ['s3:PutObject'], { resources: [bucket.arnForObjects('*')] });
  }
}
