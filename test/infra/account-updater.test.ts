import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AttributeType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Schedule } from 'aws-cdk-lib/aws-events';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { AccountUpdater } from '#infra/account-updater.ts';
import type { AccountUpdaterProps } from '#infra/account-updater.ts';
import { fixtureRoutes } from './fixtures/routes.ts';
import type { Statement } from './template-helpers.ts';
import {
  actionsOf,
  environmentOf,
  keyGrantsTheKeyIgnores,
  keyPolicyStatements,
  keyStatementNames,
  conditionBesidesPrincipal,
  principalArnCondition,
  resourcesOfType,
  leadingKeysOf,
  roleStatements,
  settings,
  synthesize as synthesizeStack,
} from './template-helpers.ts';

const functionsDir = fileURLToPath(new URL('./fixtures/functions', import.meta.url));
const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };

function synthesize(context: Record<string, unknown> = {}, props: Pick<AccountUpdaterProps, 'exportSchedule'> = {}): Template {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], ...context } });
  const stack = new Stack(app, 'AccountUpdaterTest');
  const table = new Table(stack, 'Table', { partitionKey: { name: 'pk', type: AttributeType.STRING }, sortKey: { name: 'sk', type: AttributeType.STRING } });
  const vaultKey = new Key(stack, 'VaultKey');
  const fingerprintKey = new Key(stack, 'FingerprintKey');
  const accessLogs = new Bucket(stack, 'AccessLogs');
  new AccountUpdater(stack, 'AccountUpdater', { environment: settings('dev'), projectRoot, functionsDir, table, vaultKey, fingerprintKey, accessLogs, ...props });
  return Template.fromStack(stack);
}

const idOf = (template: Template, type: string, prefix: string) => {
  const ids = Object.keys(resourcesOfType(template, type)).filter((id) => id.startsWith(prefix));
  expect(ids, `${type} ${prefix}`).toHaveLength(1);
  return ids[0]!;
};
const arnOf = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
/** The state machine's definition, each reference to another resource (a function's ARN, the bucket) read as "TOKEN". */
const definitionOf = (properties: Record<string, unknown>) => {
  const body = properties.DefinitionString as string | { 'Fn::Join': [string, unknown[]] };
  const text = typeof body === 'string' ? body : body['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : 'TOKEN')).join('');
  return JSON.parse(text) as { States: Record<string, Record<string, unknown>> };
};
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
    const onKey = (resourcesOfType(template, 'AWS::KMS::Key')[reportsKey]!.Properties.KeyPolicy as { Statement: Statement[] }).Statement.filter((statement) => keyStatementNames(statement, machineRole));
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
    // Writes reach only the item kinds each function writes.
    const leadingKeys = (id: string, action: string) =>
      leadingKeysOf(roleStatements(template, id).find((statement) => actionsOf([statement]).includes(action)));
    expect(leadingKeys(chunk, 'dynamodb:UpdateItem')).toEqual(['MTH#*', 'DUP#*']);
    expect(leadingKeys(chunk, 'dynamodb:BatchWriteItem')).toEqual(['AUHIST#*', 'AUMONTH#*']);
    expect(leadingKeys(check, 'dynamodb:PutItem')).toEqual(['AUDELIVERY#*', 'AUFILE#*']);
    expect(byResource(roleStatements(template, merge), history)).toEqual([]);
    for (const id of [chunk, exporter, check]) expect(environmentOf(template, id).AU_HISTORY_TABLE_NAME).toEqual({ Ref: history });
    expect(environmentOf(template, merge).AU_HISTORY_TABLE_NAME).toBeUndefined();
    const s3 = (id: string) =>
      roleStatements(template, id)
        .filter((statement) => mentions(statement, bucket))
        .map((statement) => [actionsOf([statement]), [...JSON.stringify(statement.Resource).matchAll(/\/(au-[a-z]+\/)\*/g)].map((match) => match[1])]);
    expect(s3(check)).toEqual([[['s3:GetObject', 's3:GetObjectVersion'], ['au-inbox/', 'au-runs/']], [['s3:PutObject'], ['au-results/', 'au-runs/']]]);
    // The chunk reads its range of the update file (under au-inbox/, or au-runs/ for au:apply) and writes its result.
    expect(s3(chunk)).toEqual([[['s3:GetObject', 's3:GetObjectVersion'], ['au-inbox/', 'au-runs/']], [['s3:PutObject'], ['au-runs/']]]);
    expect(s3(merge)).toEqual([[['s3:GetObject'], ['au-runs/']], [['s3:AbortMultipartUpload', 's3:PutObject'], ['au-results/', 'au-runs/']], [['s3:ListBucket'], []]]);
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

  it("runs a Distributed Map over the check step's ranges of the file, never its rows, each batch retried alone, fails after the summary when the map failed, and logs no execution data", () => {
    const properties = resourcesOfType(template, 'AWS::StepFunctions::StateMachine')[machine]!.Properties as Record<string, unknown>;
    expect(properties).toMatchObject({ TracingConfiguration: { Enabled: true }, LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: false } });
    const definition = definitionOf(properties);
    const map = definition.States.ApplyBatches as Record<string, Record<string, unknown>>;
    expect(map.ItemProcessor!.ProcessorConfig).toEqual({ Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' });
    // The items are the ranges the check step wrote under au-runs/ (byte offsets and line numbers): no reader of the CSV
    // and no batcher of its rows, so no cell of the file is in a child execution's input, or in the history.
    expect(map.ItemReader).toEqual({ Resource: 'arn:aws:states:::s3:getObject', ReaderConfig: { InputType: 'JSON' }, Parameters: { 'Bucket.$': '$.run.bucket', 'Key.$': '$.run.ranges_key' } });
    expect(map.ItemSelector).toEqual({ 'range.$': '$$.Map.Item.Value', 'run.$': '$.run' });
    expect(map.ItemBatcher).toBeUndefined();
    expect(JSON.stringify(definition)).not.toMatch(/"CSV|CSVHeaders|account_number/);
    expect(map).toMatchObject({ MaxConcurrency: 6, ToleratedFailurePercentage: 5 });
    // The Map's result files hold each batch's output alone (counts), not its input.
    expect(map.ResultWriter).toEqual({ Resource: 'arn:aws:states:::s3:putObject', Parameters: { Bucket: 'TOKEN', Prefix: 'au-runs/' }, WriterConfig: { OutputType: 'JSON', Transformation: 'COMPACT' } });
    // A map that failed is merged with its failure, then fails the execution (which the stack's monitoring alarms on).
    expect(definition.States.MergeFailedRun).toMatchObject({ Parameters: { 'run.$': '$.run', 'failure.$': '$.failure' } });
    expect(definition.States.RunFailed).toMatchObject({ Type: 'Fail', ErrorPath: '$.failure.Error', CausePath: '$.failure.Cause' });
    const policies = Object.values(resourcesOfType(template, 'AWS::IAM::Policy')).filter((policy) => JSON.stringify(policy.Properties).includes('ApplyStateMachineRole'));
    const statements = policies.flatMap((policy) => (policy.Properties as { PolicyDocument: { Statement: Statement[] } }).PolicyDocument.Statement);
    expect(actionsOf(statements.filter((statement) => [check, chunk, merge].some((id) => mentions(statement, id))))).toEqual(['lambda:InvokeFunction']);
    // The machine reads nothing under au-inbox/: only the functions read the update files.
    expect(statements.filter((statement) => mentions(statement, bucket) && JSON.stringify(statement.Resource).includes('/au-inbox/'))).toEqual([]);
    expect(actionsOf(statements.filter((statement) => mentions(statement, bucket) && JSON.stringify(statement.Resource).includes('/au-runs/*')))).toEqual(['s3:AbortMultipartUpload', 's3:GetObject', 's3:ListMultipartUploadParts', 's3:PutObject']);
  });

  it("encrypts the state machine's data with a key of its own, which only the machine's role and the rule that starts it may use, for this machine", () => {
    const stateMachineKey = idOf(template, 'AWS::KMS::Key', 'AccountUpdaterStateMachineKey');
    const machineRole = idOf(template, 'AWS::IAM::Role', 'AccountUpdaterApplyStateMachineRole');
    const ruleRole = idOf(template, 'AWS::IAM::Role', 'AccountUpdaterInboxRuleRole');
    const properties = resourcesOfType(template, 'AWS::StepFunctions::StateMachine')[machine]!.Properties;
    expect(properties.EncryptionConfiguration).toEqual({ Type: 'CUSTOMER_MANAGED_KMS_KEY', KmsKeyId: arnOf(stateMachineKey), KmsDataKeyReusePeriodSeconds: 300 });
    expect(resourcesOfType(template, 'AWS::KMS::Key')[stateMachineKey]!.Properties).toMatchObject({ EnableKeyRotation: true });
    const statements = keyPolicyStatements(template, stateMachineKey);
    const ofThisMachine = JSON.stringify({ StringEquals: { 'kms:EncryptionContext:aws:states:stateMachineArn': { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':states:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':stateMachine:payments-dev-account-updater']] } } });
    // A role is the account's principal plus its ARN in aws:PrincipalArn (infra/keys.ts).
    const usage = statements.slice(1).map((statement) => ({ principal: JSON.stringify(principalArnCondition(statement) ?? statement.Principal), actions: actionsOf([statement]), condition: JSON.stringify(conditionBesidesPrincipal(statement) ?? null) }));
    expect(usage).toEqual([
      { principal: JSON.stringify(arnOf(machineRole)), actions: ['kms:Decrypt', 'kms:GenerateDataKey'], condition: ofThisMachine },
      { principal: JSON.stringify(arnOf(machineRole)), actions: ['kms:GenerateDataKey'], condition: expect.stringContaining('kms:EncryptionContext:SourceArn') },
      { principal: JSON.stringify({ Service: 'delivery.logs.amazonaws.com' }), actions: ['kms:Decrypt'], condition: expect.stringContaining('aws:SourceAccount') },
      { principal: JSON.stringify(arnOf(ruleRole)), actions: ['kms:GenerateDataKey'], condition: ofThisMachine },
    ]);
    expect(statements[0]!.Sid).toBe('KeyAdministration');
    for (const id of [check, chunk, merge, exporter]) expect(roleStatements(template, id).filter((statement) => mentions(statement, stateMachineKey))).toEqual([]);
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

  it('takes the schedule from its exportSchedule prop, not from context (the app maps -c auExportSchedule to the prop)', () => {
    synthesize({}, { exportSchedule: Schedule.expression('cron(30 2 1 * ? *)') }).hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'cron(30 2 1 * ? *)' });
    synthesize({ auExportSchedule: 'cron(30 2 1 * ? *)' }).hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'cron(0 6 1 * ? *)' });
  }, 60_000);
});

describe('the reports bucket for roles outside the stack (reportsInboxWriters, reportsReaders)', () => {
  const network = 'arn:aws:iam::111122223333:role/card-network-delivery';
  const finance = 'arn:aws:iam::123456789012:role/finance-reports';
  const operator = 'arn:aws:iam::123456789012:role/payments-operator';
  const stranger = 'arn:aws:iam::123456789012:role/someone-else';
  let template: Template;
  let bucket: string;
  let reportsKey: string;
  beforeAll(() => {
    template = synthesizeStack(settings('dev', { reportsInboxWriters: [network, operator], reportsReaders: [finance, operator] }), { routes: fixtureRoutes, functionsDir });
    bucket = idOf(template, 'AWS::S3::Bucket', 'AccountUpdaterReportsBucket');
    reportsKey = idOf(template, 'AWS::KMS::Key', 'AccountUpdaterReportsKey');
  }, 180_000);

  /**
   * What the bucket policy alone says of one request: `denied` (no IAM policy can
   * change that), `allowed` (enough for a role of another account whose own
   * policy allows it too), or `not allowed` (only a role of this account with an
   * IAM policy that allows it). Requests are over TLS, so the TLS-only Deny never applies.
   */
  const decide = (principal: string, action: string, target: { key: string } | { prefix?: string }): 'allowed' | 'denied' | 'not allowed' => {
    const statements = bucketPolicyStatements(template, bucket);
    const resource = 'key' in target ? `/${target.key}` : '';
    const matching = statements.filter((statement) => {
      if (![statement.Action].flat().includes(action)) return false;
      const patterns = statement.Resource !== undefined ? [statement.Resource].flat() : [statement.NotResource].flat();
      const covered = patterns.some((pattern) => glob(bucketSuffix(pattern, bucket)).test(resource));
      if (covered === (statement.Resource === undefined)) return false;
      const condition = (statement.Condition ?? {}) as Record<string, Record<string, unknown>>;
      if (condition.Bool?.['aws:SecureTransport'] === 'false') return false;
      const named = statement.Principal === '*' ? [condition.ArnEquals?.['aws:PrincipalArn']].flat() : [(statement.Principal as { AWS: unknown }).AWS].flat();
      if (!named.includes(principal)) return false;
      const prefixes = condition.StringLike?.['s3:prefix'];
      return prefixes === undefined || ('prefix' in target && target.prefix !== undefined && [prefixes].flat().some((pattern) => glob(String(pattern)).test(target.prefix!)));
    });
    if (matching.some((statement) => statement.Effect === 'Deny')) return 'denied';
    return matching.some((statement) => statement.Effect === 'Allow') ? 'allowed' : 'not allowed';
  };

  it('lets writers put files under au-inbox/ and nothing more, whatever their own IAM policies allow', () => {
    for (const writer of [network, operator]) {
      expect(decide(writer, 's3:PutObject', { key: 'au-inbox/org_200/2026-05-updates.csv' }), writer).toBe('allowed');
      expect(decide(writer, 's3:AbortMultipartUpload', { key: 'au-inbox/updates.csv' }), writer).toBe('allowed');
      for (const key of ['au-runs/run-1/batches/0.json', 'au-results/updates.csv.json', 'au-reports/org_200/2026-05.csv', 'elsewhere.csv']) {
        expect(decide(writer, 's3:PutObject', { key }), `${writer} ${key}`).toBe('denied');
      }
    }
    for (const key of ['au-inbox/updates.csv', 'au-runs/run-1/batches/0.json', 'au-results/updates.csv.json', 'au-reports/org_200/2026-05.csv']) {
      for (const action of ['s3:GetObject', 's3:GetObjectVersion']) expect(decide(network, action, { key }), `${action} ${key}`).toBe('denied');
    }
    expect(decide(network, 's3:ListBucket', { prefix: 'au-reports/' })).toBe('not allowed');
  });

  it('lets readers get and list au-results/ and au-reports/ and nothing more, whatever their own IAM policies allow', () => {
    for (const reader of [finance, operator]) {
      for (const key of ['au-results/org_200/updates.csv.json', 'au-results/updates.csv.errors.csv', 'au-reports/org_200/2026-05.csv']) {
        expect(decide(reader, 's3:GetObject', { key }), `${reader} ${key}`).toBe('allowed');
      }
      for (const prefix of ['au-results/', 'au-reports/org_200/']) expect(decide(reader, 's3:ListBucket', { prefix }), `${reader} ${prefix}`).toBe('allowed');
      // Update files and batches hold card numbers in the clear.
      for (const key of ['au-inbox/updates.csv', 'au-runs/run-1/batches/0.json']) {
        for (const action of ['s3:GetObject', 's3:GetObjectVersion']) expect(decide(reader, action, { key }), `${reader} ${action} ${key}`).toBe('denied');
      }
      for (const prefix of ['au-inbox/', 'au-runs/', undefined]) expect(decide(reader, 's3:ListBucket', { prefix }), `${reader} ${prefix}`).toBe('not allowed');
    }
    for (const key of ['au-inbox/updates.csv', 'au-results/updates.csv.json', 'au-reports/org_200/2026-05.csv']) expect(decide(finance, 's3:PutObject', { key }), key).toBe('denied');
  });

  it('names nobody else: a role in neither list gets nothing from the bucket policy', () => {
    for (const action of ['s3:PutObject', 's3:GetObject']) expect(decide(stranger, action, { key: 'au-reports/org_200/2026-05.csv' })).toBe('not allowed');
  });

  it('backs each role in the reports key policy through S3 only: writers GenerateDataKey and Decrypt (a multipart upload needs it), readers Decrypt', () => {
    const statements = keyPolicyStatements(template, reportsKey);
    const usage = (principal: string) => statements
      .filter((statement) => [(statement.Principal as { AWS: unknown }).AWS].flat().includes(principal))
      .map((statement) => ({ actions: actionsOf([statement]), condition: statement.Condition }));
    const viaS3 = { StringEquals: { 'kms:ViaService': { 'Fn::Join': ['', ['s3.', { Ref: 'AWS::Region' }, '.amazonaws.com']] } } };
    expect(usage(network)).toEqual([{ actions: ['kms:Decrypt', 'kms:GenerateDataKey'], condition: viaS3 }]);
    expect(usage(finance)).toEqual([{ actions: ['kms:Decrypt'], condition: viaS3 }]);
    expect(usage(operator)).toEqual([{ actions: ['kms:Decrypt', 'kms:GenerateDataKey'], condition: viaS3 }, { actions: ['kms:Decrypt'], condition: viaS3 }]);
    expect(usage(stranger)).toEqual([]);
    // The stack's own grants are unchanged by them.
    expect(keyGrantsTheKeyIgnores(template)).toEqual([]);
  });

  it('adds nothing to either policy with empty lists, the default', () => {
    const empty = synthesizeStack(settings('dev', { reportsInboxWriters: [], reportsReaders: [] }), { routes: fixtureRoutes, functionsDir });
    expect(settings('dev')).toMatchObject({ reportsInboxWriters: [], reportsReaders: [] });
    const emptyBucket = idOf(empty, 'AWS::S3::Bucket', 'AccountUpdaterReportsBucket');
    // Only the TLS Denies: no plain HTTP, no TLS older than 1.2.
    expect(bucketPolicyStatements(empty, emptyBucket)).toEqual([
      expect.objectContaining({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      expect.objectContaining({ Effect: 'Deny', Action: 's3:*', Condition: { NumericLessThan: { 's3:TlsVersion': 1.2 } } }),
    ]);
    // The key administration, then the stack's roles, all by reference: no role named by ARN.
    const keyStatements = keyPolicyStatements(empty, idOf(empty, 'AWS::KMS::Key', 'AccountUpdaterReportsKey'));
    expect(keyStatements.map((statement) => statement.Sid ?? null)).toEqual(['KeyAdministration', ...keyStatements.slice(1).map(() => null)]);
    expect(JSON.stringify(keyStatements)).not.toContain(':role/');
    // And the rest of the template is the one with the lists set, less those statements.
    const withoutOutsiders = (candidate: Template) => {
      const json = structuredClone(candidate.toJSON()) as { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };
      for (const resource of Object.values(json.Resources)) {
        if (resource.Type !== 'AWS::S3::BucketPolicy' && resource.Type !== 'AWS::KMS::Key') continue;
        const document = (resource.Properties.PolicyDocument ?? resource.Properties.KeyPolicy) as { Statement: Statement[] };
        document.Statement = document.Statement.filter((statement) => !/^(InboxWriters|ReportReaders|OutsideRoles)/.test(statement.Sid ?? ''));
      }
      return json;
    };
    expect(withoutOutsiders(template)).toEqual(withoutOutsiders(empty));
  }, 60_000);
});

function bucketPolicyStatements(template: Template, bucketId: string): Statement[] {
  const policies = Object.values(resourcesOfType(template, 'AWS::S3::BucketPolicy')).filter((policy) => JSON.stringify(policy.Properties.Bucket) === JSON.stringify({ Ref: bucketId }));
  expect(policies).toHaveLength(1);
  return (policies[0]!.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
}

/** A policy resource on the bucket as the part after the bucket's ARN: '' for the bucket, '/au-inbox/*' for objects. */
function bucketSuffix(resource: unknown, bucketId: string): string {
  const arn = { 'Fn::GetAtt': [bucketId, 'Arn'] };
  if (JSON.stringify(resource) === JSON.stringify(arn)) return '';
  const join = (resource as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (join && join[0] === '' && join[1].length === 2 && JSON.stringify(join[1][0]) === JSON.stringify(arn) && typeof join[1][1] === 'string') return join[1][1];
  throw new Error(`Not a resource of the reports bucket: ${JSON.stringify(resource)}`);
}

/** An IAM policy pattern ("*" any run of characters, "?" one) as an anchored regular expression. */
function glob(pattern: string): RegExp {
  return new RegExp(`^${pattern.split('').map((character) => (character === '*' ? '.*' : character === '?' ? '.' : character.replace(/[.+^${}()|[\]\\/]/g, '\\$&'))).join('')}$`);
}
