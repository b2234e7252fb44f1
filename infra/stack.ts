import { Annotations, CfnOutput, Duration, NestedStack, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { StackProps } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { AccountRootPrincipal, AnyPrincipal, ArnPrincipal, Effect, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { DomainName } from 'aws-cdk-lib/aws-apigateway';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import type { Schedule } from 'aws-cdk-lib/aws-events';
import { KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { CfnBucket } from 'aws-cdk-lib/aws-s3';
import { Bucket, BucketEncryption, ObjectLockRetention, StorageClass } from 'aws-cdk-lib/aws-s3';
import type { LifecycleRule } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { PAYPAL_UNSET_CLIENT_ID } from '#shared/platform/paypal-secret.ts';
import { MALWARE_SCAN, READS_BEFORE_SCAN, eventRuleTriggers, s3Triggers, streamTriggers } from '#shared/platform/triggers.ts';
import type { S3Trigger, StreamTrigger, EventRuleTrigger } from '#shared/platform/triggers.ts';
import { routes as routeTable } from '#shared/platform/routes.ts';
import type { RouteDefinition } from '#shared/platform/routes.ts';
import { AUTHORIZER_UNAUTHORIZED_METRIC } from '#shared/observability/catalog.ts';
import { DOCUMENT_OBJECT_PREFIX, UPLOAD_OBJECT_PREFIX } from '#shared/platform/names.ts';
import { TABLE_KEY, TABLE_STREAM_VIEW, TTL_ATTRIBUTE, WEBHOOK_TABLE_KEY } from '#shared/platform/table.ts';
import { AccountUpdater } from './account-updater.ts';
import { customDomain } from './custom-domain.ts';
import { DomainEvents } from './domain-events.ts';
import { WebhookDelivery, WebhookQueues } from './webhooks.ts';

/** The intake queue's oldest event may wait this long before on-call hears of it: fan-out is seconds of work. */
export const WEBHOOK_INTAKE_AGE_ALARM_SECONDS = 300;
import { assertReservedConcurrencyNames, bucketNotificationsLogGroup } from './functions.ts';
import { EventRuleTriggeredFunctions } from './event-rule-triggers.ts';
import { MalwareProtection, grantOwnScanners, refuseUnscannedReads } from './malware-protection.ts';
import type { FunctionSources } from './functions.ts';
import { PaymentsRestApi } from './api.ts';
import { S3TriggeredFunctions } from './s3-triggers.ts';
import type { EnvironmentSettings } from './environments.ts';
import { PRIVATE_BUCKET } from './environments.ts';
import { grantKeyUsage, scopedKey } from './keys.ts';
import { Monitoring } from './monitoring.ts';
import { applyNagSuppressions } from './nag.ts';
import { exemptFromRule } from './platform-rules.ts';
import { archiveAfterDays, validateScanning, validateServiceKeys } from './service-props.ts';
import type { CustomDomainSettings, DocumentStorageSettings, ScanningSettings, ServiceKeys } from './service-props.ts';
import { tableIndexes } from './table-indexes.ts';
import type { TableIndexes } from './table-indexes.ts';
import { plainTable } from './tables.ts';
import { ApiWebAcl } from './waf.ts';
import { apiSamplingRule } from './tracing.ts';
import { SERVICE_FEATURE_FLAGS } from './feature-flags.ts';

/**
 * What the payments service is built from. Most of it is the environment
 * (`environmentSettings` in infra/environments.ts validates a plain object
 * into one: name, log retention, removal policy, web ACL and its limits,
 * alarms and their destination, reserved concurrency and the account quota,
 * the roles outside the stack); the rest defaults to this repository's route
 * and trigger tables and handlers.
 */
export interface PaymentsServiceProps {
  /** The environment's settings (below); `environmentSettings(name, { [name]: {...} })` builds them from cdk.json's shape. */
  readonly environment: EnvironmentSettings;
  /** Default: the route table. */
  readonly routes?: readonly RouteDefinition[];
  /** Default: `<repo>/functions`. */
  readonly functionsDir?: string;
  /** Default: the S3 trigger table (shared/platform/triggers.ts). */
  readonly s3Triggers?: readonly S3Trigger[];
  /** Default: the EventBridge rule trigger table (shared/platform/triggers.ts): the malware scan's result handler. */
  readonly eventRuleTriggers?: readonly EventRuleTrigger[];
  /** Default: the stream trigger table (shared/platform/triggers.ts): the domain event publisher. */
  readonly streamTriggers?: readonly StreamTrigger[];
  /** The API under a domain of yours, with its certificate (below). Default: none; the API answers on its execute-api URL (`ApiUrl`). */
  readonly customDomain?: CustomDomainSettings;
  /**
   * Your alarm topic: every alarm (and its OK) notifies it, and the service
   * creates no topic and no topic key. Its policy must let CloudWatch alarms of
   * this account publish (the default topic policy does), and its key, if any,
   * must let cloudwatch.amazonaws.com use it. Not with `environment.alarms.email`
   * (subscribe the address to your topic). Default: a topic of the service's,
   * output as `AlarmTopicArn`.
   */
  readonly alarmTopic?: ITopic;
  /** Keys of yours to use instead of the ones the service creates, each optional (below). Default: the service creates all seven. */
  readonly keys?: ServiceKeys;
  /** When the Account Updater exports the previous month (an EventBridge schedule). Default: `cron(0 6 1 * ? *)`, 06:00 UTC on the 1st; this repository's app takes the `auExportSchedule` context. */
  readonly accountUpdaterExportSchedule?: Schedule;
  /** Malware scanning of stored documents (below). Default: GuardDuty Malware Protection on the documents bucket. */
  readonly scanning?: ScanningSettings;
  /** How stored documents are kept (below). Default: files over 128 KiB move to Glacier Instant Retrieval after 30 days. */
  readonly documentStorage?: DocumentStorageSettings;
  // Webhook options join these props with the webhooks feature.
}

/** The publisher is this far behind the table before someone is paged (events are meant to arrive within seconds). */
const EVENTS_ITERATOR_AGE_ALARM_MS = 60_000;

const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
/**
 * The payments service (API, data, keys, triggers, Account Updater,
 * monitoring) as one construct, for any stack: this repository's app places it
 * in `PaymentsApiStack`, a cloud team's app in a stack of its own. Its nested
 * stacks, function roles and CDK's per-stack singletons belong to the stack it
 * is placed in: one service per stack. The API Gateway account setting is not
 * part of it (`ApiGatewayAccountSettings`, once per account and region).
 */
export class PaymentsService extends Construct {
  readonly api: PaymentsRestApi;
  /** Alarm topic, dashboard and the hooks features use (watchFunction, alarmOnQueueDepth, alarmOnAccountUpdaterExportFailure, alarmOnAccountUpdaterApplyFailure). */
  readonly monitoring: Monitoring;
  readonly table: Table;
  readonly documents: Bucket;
  /** Undefined with `scanning.malwareProtectionPlan` false. */
  readonly malwareProtection?: MalwareProtection;
  readonly vaultKey: IKey;
  /** Undefined unless `customDomain` is set. */
  readonly customDomain?: DomainName;
  readonly domainEvents: DomainEvents;
  readonly accountUpdater: AccountUpdater;

  constructor(scope: Construct, id: string, props: PaymentsServiceProps) {
    super(scope, id);
    // The feature flags the service is written for, whatever the app around it sets (a flag is read from the
    // nearest context, so these hold for everything under this construct).
    for (const [flag, value] of Object.entries(SERVICE_FEATURE_FLAGS)) this.node.setContext(flag, value);
    const { environment } = props;
    const keys = props.keys ?? {};
    validateServiceKeys(this, keys);
    const scanning = validateScanning(props.scanning ?? {});
    const archiveDays = archiveAfterDays(props.documentStorage);
    if (props.alarmTopic && environment.alarms.email) {
      throw new Error('alarmTopic and environment.alarms.email: the service subscribes an address only to a topic of its own; subscribe it to yours');
    }
    if (props.alarmTopic && keys.alarmTopic) throw new Error('alarmTopic and keys.alarmTopic: the key encrypts the topic the service creates; yours is encrypted as you set it');

    // An upgrade of a deployed stack withholds new indexes, holds back reads of backfilling ones and retains
    // retired ones (docs/operations.md, "Upgrading: indexes").
    const indexes = tableIndexes({
      withheld: this.node.tryGetContext('withheldIndexes'),
      backfilling: this.node.tryGetContext('backfillingIndexes'),
      retained: this.node.tryGetContext('retainedIndexes'),
    });
    for (const index of indexes.unserved) {
      Annotations.of(this).addWarningV2('payments:unservedIndex', `${index} is withheld or backfilling and no index it replaces is retained: lists that read it answer 500 until it exists and is filled`);
    }
    const tableIndexNames = indexes.indexes.map((index) => index.indexName);
    const table = createTable(this, environment, indexes.indexes);
    // Key policies name the roles that may use each key (see keys.ts): no account-wide usage.
    const vaultKey = keys.vault ?? scopedKey(this, 'VaultKey', {
      description: `Payments ${environment.name}: wraps account-number data keys and encrypts documents`,
      enableKeyRotation: true,
      removalPolicy: environment.removalPolicy,
    });
    const credentialMacKey = keys.credentialMac ?? scopedKey(this, 'CredentialMacKey', {
      description: `Payments ${environment.name}: keyed hash of API secure keys`,
      keySpec: KeySpec.HMAC_256,
      keyUsage: KeyUsage.GENERATE_VERIFY_MAC,
      // KMS rotates symmetric encryption keys only; and a MAC names no key version, so new key
      // material would invalidate every stored hash. Rotating means issuing new credentials.
      enableKeyRotation: false,
      removalPolicy: environment.removalPolicy,
    });
    // Its own key, not the credential key: a different purpose, a different set of roles in its
    // policy, and neither key's compromise reaches the other's values (docs/vault.md, "Fingerprints").
    const fingerprintKey = keys.fingerprint ?? scopedKey(this, 'FingerprintKey', {
      description: `Payments ${environment.name}: derives each organization's paymethod fingerprint key`,
      keySpec: KeySpec.HMAC_256,
      keyUsage: KeyUsage.GENERATE_VERIFY_MAC,
      // New key material would change every fingerprint (and break every duplicate check) at once.
      enableKeyRotation: false,
      removalPolicy: environment.removalPolicy,
    });
    // Its own key, not the fingerprint key: every function that keeps Idempotency-Key records
    // needs GenerateMac on it, and IAM cannot limit GenerateMac to one message, so a grant on the
    // fingerprint key would let them derive any organization's fingerprint key (docs/vault.md,
    // "Idempotency keys").
    const requestHashKey = keys.requestHash ?? scopedKey(this, 'RequestHashKey', {
      description: `Payments ${environment.name}: keyed hash of Idempotency-Key requests`,
      keySpec: KeySpec.HMAC_256,
      keyUsage: KeyUsage.GENERATE_VERIFY_MAC,
      // New key material would make every stored Idempotency-Key a mismatch (422) for 24 h.
      enableKeyRotation: false,
      removalPolicy: environment.removalPolicy,
    });
    // The admin CLI issues credentials with the operator's own identity.
    grantCredentialIssuers(credentialMacKey, environment);
    const accessLogs = createAccessLogsBucket(this, environment);
    const documents = createDocumentsBucket(this, environment, vaultKey, accessLogs, archiveDays);
    const malwareProtection = scanning.malwareProtectionPlan ? new MalwareProtection(this, 'MalwareProtection', { bucket: documents, key: vaultKey }) : undefined;
    // PayPal's REST client credentials, created in their JSON shape with a placeholder client_id (PayPal
    // creates answer 503 "not configured" until `admin set-paypal-credentials` stores the real pair).
    // A generated value is never rewritten by later deploys, unlike a literal one.
    const paypalSecret = new Secret(this, 'PaypalCredentials', {
      description: `Payments ${environment.name}: PayPal REST client credentials (JSON client_id, client_secret)`,
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ client_id: PAYPAL_UNSET_CLIENT_ID }),
        generateStringKey: 'client_secret',
        excludePunctuation: true,
      },
      removalPolicy: environment.removalPolicy,
    });
    const webhooksStack = nestedStack(this, 'WebhooksStack', `Payments ${environment.name}: webhook queues, the rule that feeds them, fan-out and delivery`);
    const webhookQueues = new WebhookQueues(webhooksStack, 'WebhookQueues', environment);
    // Webhook delivery state (shared/platform/table.ts WEBHOOK_TABLE_KEY); a message body is an event's detail, which
    // carries no account number.
    const webhookDeliveries = plainTable(this, 'WebhookDeliveriesTable', WEBHOOK_TABLE_KEY, environment);
    const resources = {
      webhookQueues: webhookQueues.queues,
      webhookDeliveries,
      table,
      tableIndexNames,
      tableIndexStandIns: indexes.standIns,
      documents,
      vaultKey,
      fingerprintKey,
      requestHashKey,
      paypal: { secret: paypalSecret, apiUrl: environment.paypalApiUrl },
    };
    const sources: FunctionSources = { environment, projectRoot: PROJECT_ROOT, functionsDir: props.functionsDir ?? join(PROJECT_ROOT, 'functions') };

    // This stack keeps the data (table, buckets, keys, secret) and every function's role, which the
    // key policies name (infra/functions.ts); behaviour goes to nested stacks, one `cdk deploy` still
    // deploying all: each stays far from CloudFormation's 500 resources and 1 MB per template
    // (test/infra/template-size.test.ts), and a data resource never has to move between stacks.
    const apiStack = nestedStack(this, 'ApiStack', `Payments ${environment.name}: the REST API, its route functions, authorizer and web ACL`);
    const restApi = new PaymentsRestApi(apiStack, 'Api', { ...sources, routes: props.routes ?? routeTable, resources, credentialMacKey });
    const { api } = restApi;
    apiSamplingRule(apiStack, api.deploymentStage, environment.name);
    if (environment.webAcl) {
      new ApiWebAcl(apiStack, 'WebAcl', {
        stage: api.deploymentStage,
        responseEnvironment: environment.responseEnvironment,
        ...environment.webAcl,
        uploadRoutes: restApi.routeFunctions.map(({ route }) => route).filter((route) => route.binaryBody === true),
        environmentName: environment.name,
        logRetention: environment.logRetention,
        removalPolicy: environment.removalPolicy,
      });
    }

    const triggersStack = nestedStack(this, 'TriggersStack', `Payments ${environment.name}: functions the documents bucket and the table's stream invoke, and the domain event bus`);
    const triggered = new S3TriggeredFunctions(triggersStack, 'S3Triggers', { ...sources, triggers: props.s3Triggers ?? s3Triggers, resources });
    const domainEvents = new DomainEvents(triggersStack, 'DomainEvents', { ...sources, table, triggers: props.streamTriggers ?? streamTriggers });
    const scanResults = new EventRuleTriggeredFunctions(triggersStack, 'EventRuleTriggers', {
      ...sources,
      triggers: withScanResultSource(props.eventRuleTriggers ?? eventRuleTriggers, scanning.resultEventSource),
      resources,
    });
    // The finalizer reads the copy it checks before it is scanned; apart from the scanner, nothing else reads an unscanned file.
    const readersBeforeScan = triggered.functions.filter(({ name }) => READS_BEFORE_SCAN.includes(name)).flatMap(({ fn }) => (fn.role ? [fn.role.roleArn] : []));
    if (malwareProtection) malwareProtection.refuseUnscannedReads(documents, readersBeforeScan);
    else {
      refuseUnscannedReads(documents, [...scanning.scannerRoleArns, ...readersBeforeScan]);
      grantOwnScanners(documents, vaultKey, scanning.scannerRoleArns);
      // The plan turns these on for itself; the team's scanner learns of new files from them.
      documents.enableEventBridgeNotification();
    }

    const webhooks = new WebhookDelivery(webhooksStack, 'WebhookDelivery', { ...sources, bus: domainEvents.bus, queues: webhookQueues, resources });

    const accountUpdaterStack = nestedStack(this, 'AccountUpdaterStack', `Payments ${environment.name}: the Account Updater`);
    const accountUpdater = new AccountUpdater(accountUpdaterStack, 'AccountUpdater', {
      ...sources,
      table,
      tableIndexStandIns: indexes.standIns,
      vaultKey,
      fingerprintKey,
      accessLogs,
      exportSchedule: props.accountUpdaterExportSchedule,
      reportsKey: keys.reports,
      stateMachineKey: keys.stateMachine,
    });

    const monitoringStack = nestedStack(this, 'MonitoringStack', `Payments ${environment.name}: alarms, their topic and the dashboard`);
    const monitoring = new Monitoring(monitoringStack, 'Monitoring', { environment, stage: api.deploymentStage, table, tableIndexNames, topic: props.alarmTopic, topicKey: keys.alarmTopic });
    monitoring.watchRoutes(restApi.routeFunctions.map(({ route }) => route.handler));
    monitoring.watchFunctions([
      ...(restApi.authorizerFunction ? [{ name: 'authorizer', fn: restApi.authorizerFunction, errorsByDesign: AUTHORIZER_UNAUTHORIZED_METRIC }] : []),
      ...restApi.routeFunctions.map(({ route, fn }) => ({ name: route.handler, fn })),
      ...triggered.functions,
    ]);
    if (triggered.functions.length > 0) monitoring.alarmOnQueueDepth(triggered.deadLetterQueue, { name: 's3-event-dlq' });
    monitoring.watchFunctions(scanResults.functions);
    if (scanResults.functions.length > 0) {
      monitoring.alarmOnQueueDepth(scanResults.deadLetterQueue, { name: 'scan-result-dlq', runbook: 'docs/operations.md#document-scan-failures' });
      monitoring.alarmOnDocumentScanFailures(scanResults.functions[0]!.fn);
    }
    monitoring.watchFunctions([
      { name: 'au-check', fn: accountUpdater.checkFunction },
      { name: 'au-chunk', fn: accountUpdater.chunkFunction },
      { name: 'au-merge', fn: accountUpdater.mergeFunction },
      { name: 'au-export', fn: accountUpdater.exportFunction },
    ]);
    monitoring.alarmOnQueueDepth(accountUpdater.deadLetterQueue, { name: 'au-dlq' });
    monitoring.alarmOnAccountUpdaterExportFailure(accountUpdater.exportFunction);
    monitoring.alarmOnAccountUpdaterApplyFailure(accountUpdater.applyStateMachine);
    monitoring.watchHistoryTable(accountUpdater.historyTable);
    monitoring.watchFunctions(domainEvents.functions);
    for (const { name, fn } of domainEvents.functions) {
      monitoring.alarmOnIteratorAge(name, fn, { thresholdMs: EVENTS_ITERATOR_AGE_ALARM_MS, runbook: 'docs/operations.md#domain-events-behind' });
    }
    monitoring.watchFunctions(webhooks.functions);
    monitoring.watchWebhookDeliveriesTable(webhookDeliveries);
    monitoring.alarmOnQueueDepth(webhookQueues.deadLetterQueues.intake, { name: 'webhook-intake-dlq', runbook: 'docs/webhooks.md#operations' });
    monitoring.alarmOnQueueDepth(webhookQueues.deadLetterQueues.delivery, { name: 'webhook-delivery-dlq', runbook: 'docs/webhooks.md#operations' });
    monitoring.alarmOnOldestMessage(webhookQueues.queues.intake, { name: 'webhook-intake', thresholdSeconds: WEBHOOK_INTAKE_AGE_ALARM_SECONDS, runbook: 'docs/webhooks.md#operations' });
    if (domainEvents.functions.length > 0) {
      monitoring.alarmOnQueueDepth(domainEvents.deadLetterQueue, { name: 'events-dlq', runbook: 'docs/operations.md#domain-events-dead-letters' });
    }

    this.api = restApi;
    this.monitoring = monitoring;
    this.table = table;
    this.documents = documents;
    this.malwareProtection = malwareProtection;
    this.vaultKey = vaultKey;
    this.domainEvents = domainEvents;
    this.accountUpdater = accountUpdater;

    if (props.customDomain) {
      const domain = customDomain(apiStack, api, props.customDomain);
      this.customDomain = domain;
      output(this, 'CustomDomainTarget', domain.domainNameAliasDomainName, `Point ${props.customDomain.domainName} here (Route 53 alias or CNAME)`);
      output(this, 'CustomDomainHostedZoneId', domain.domainNameAliasHostedZoneId, 'The target\'s hosted zone, for a Route 53 alias');
      output(this, 'CustomDomainUrl', `https://${props.customDomain.domainName}/${props.customDomain.basePath ? `${props.customDomain.basePath}/` : ''}`, 'Routes live under <CustomDomainUrl>v3/');
    }

    // Plain outputs, no exports: CLIs read them with DescribeStacks.
    output(this, 'ApiUrl', api.url, 'Stage URL; routes live under <ApiUrl>v3/');
    output(this, 'RestApiId', api.restApiId, 'admin revoke-* flushes this API stage\'s authorizer cache');
    output(this, 'StageName', api.deploymentStage.stageName);
    output(this, 'TableName', table.tableName);
    output(this, 'AccountUpdaterHistoryTableName', accountUpdater.historyTable.tableName, 'Account Updater history: what the monthly export reads');
    output(this, 'DocumentsBucketName', documents.bucketName);
    output(this, 'ReportsBucketName', accountUpdater.reports.bucketName);
    output(this, 'VaultKeyId', vaultKey.keyId);
    output(this, 'CredentialMacKeyId', credentialMacKey.keyId);
    output(this, 'FingerprintKeyId', fingerprintKey.keyId, 'Paymethod fingerprints; the backfill needs kms:GenerateMac on it');
    output(this, 'PaypalSecretArn', paypalSecret.secretArn, 'PayPal client credentials; set with: npm run --silent admin -- set-paypal-credentials --stack <this stack>');
    output(this, 'EventBusName', domainEvents.bus.eventBusName, 'Domain events (docs/events.md): rules on this bus receive them');
    output(this, 'EventBusArn', domainEvents.bus.eventBusArn);
    output(this, 'EnvironmentName', environment.responseEnvironment, 'response.environment (ENVIRONMENT_NAME)');
    output(this, 'AlarmTopicArn', monitoring.topic.topicArn, props.alarmTopic ? 'Your alarm topic: the alarms notify it' : 'Subscribe on-call here');
    output(this, 'DashboardName', monitoring.dashboard.dashboardName);

    // After every bucket: CDK creates its notifications function with the first bucket of a stack that needs one.
    for (const stack of [Stack.of(this), accountUpdaterStack]) bucketNotificationsLogGroup(stack, environment);
    assertReservedConcurrencyNames(Stack.of(this), environment);

    applyNagSuppressions({
      api: restApi,
      otherFunctions: [
        ...triggered.functions.map(({ fn }) => fn),
        accountUpdater.checkFunction, accountUpdater.chunkFunction, accountUpdater.mergeFunction, accountUpdater.exportFunction,
        ...domainEvents.functions.map(({ fn }) => fn),
        ...scanResults.functions.map(({ fn }) => fn),
        ...webhooks.functions.map(({ fn }) => fn),
      ],
      malwareProtectionRole: malwareProtection?.role,
      stateMachines: [accountUpdater.applyStateMachine],
      streamReaders: domainEvents.functions.map(({ fn }) => fn),
      paypalSecret,
      deadLetterQueues: [triggered.deadLetterQueue, accountUpdater.deadLetterQueue, domainEvents.deadLetterQueue, scanResults.deadLetterQueue],
      webAcl: environment.webAcl !== undefined,
      stacks: [this, apiStack, triggersStack, accountUpdaterStack, monitoringStack],
    });
  }
}

export interface PaymentsApiStackProps extends StackProps, PaymentsServiceProps {}

/**
 * This repository's stack: the service under the id `Default`, which CDK
 * leaves out of logical ids, so every resource and output keeps the id it had
 * when the stack held the resources itself (a deployed stack updates in place).
 */
export class PaymentsApiStack extends Stack {
  readonly service: PaymentsService;
  readonly api: PaymentsRestApi;
  readonly monitoring: Monitoring;
  readonly table: Table;
  readonly documents: Bucket;
  readonly vaultKey: IKey;
  readonly domainEvents: DomainEvents;
  readonly accountUpdater: AccountUpdater;

  constructor(scope: Construct, id: string, props: PaymentsApiStackProps) {
    super(scope, id, props);
    this.service = new PaymentsService(this, 'Default', props);
    ({ api: this.api, monitoring: this.monitoring, table: this.table, documents: this.documents, vaultKey: this.vaultKey, domainEvents: this.domainEvents, accountUpdater: this.accountUpdater } = this.service);
  }
}

/**
 * kms:GenerateMac on the credential key for the admin CLI: the configured
 * operator roles, or (none configured) the account's IAM identities whose own
 * policies allow it. Only this one action is delegated, never a usage that reveals data.
 */
function grantCredentialIssuers(key: IKey, environment: EnvironmentSettings): void {
  const issuers: IGrantable[] = environment.credentialIssuers.length
    ? environment.credentialIssuers.map((arn) => ({ grantPrincipal: new ArnPrincipal(arn) }))
    : [{ grantPrincipal: new AccountRootPrincipal() }];
  for (const issuer of issuers) grantKeyUsage(key, issuer, ['kms:GenerateMac']);
}

/**
 * AWS managed encryption: account numbers are already envelope-encrypted with the
 * vault key before they reach the table, so a customer key here would add KMS
 * grants to every function and cost per request without protecting more; key use
 * still shows in CloudTrail, unlike the AWS owned default. The indexes are the
 * current ones unless an upgrade withholds or retains some (table-indexes.ts); the
 * local runtime creates the current ones from the same list (shared/platform/table.ts).
 */
function createTable(scope: Construct, environment: EnvironmentSettings, indexes: TableIndexes['indexes']): Table {
  const table = new Table(scope, 'Table', {
    partitionKey: { name: TABLE_KEY.partitionKey, type: AttributeType.STRING },
    sortKey: { name: TABLE_KEY.sortKey, type: AttributeType.STRING },
    billingMode: BillingMode.PAY_PER_REQUEST,
    // Both images of every write: the domain event publisher derives events from them (docs/events.md).
    stream: StreamViewType[TABLE_STREAM_VIEW],
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    timeToLiveAttribute: TTL_ATTRIBUTE,
    encryption: TableEncryption.AWS_MANAGED,
    deletionProtection: environment.deletionProtection,
    removalPolicy: environment.removalPolicy,
  });
  for (const index of indexes) {
    table.addGlobalSecondaryIndex({
      indexName: index.indexName,
      partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
      sortKey: { name: index.sortKey, type: AttributeType.STRING },
      ...(index.projection === 'ALL' ? { projectionType: ProjectionType.ALL } : { projectionType: ProjectionType.INCLUDE, nonKeyAttributes: [...index.projection] }),
    });
  }
  return table;
}

/**
 * Server access logs of the documents bucket. S3 log delivery cannot write with
 * SSE-KMS, so SSE-S3; private, TLS-only, versioned, and kept as long as the
 * other logs, old versions too (an overwritten or deleted log lives on as one).
 * It does not log itself (that would log its own log writes forever).
 *
 * S3 refuses to deliver server access logs to a bucket with an Object Lock
 * default retention, so every log is replicated to a log archive that has one
 * (`createLogArchiveBucket`): what was delivered cannot be altered or deleted
 * before the retention ends, whoever holds this bucket.
 */
function createAccessLogsBucket(scope: Construct, environment: EnvironmentSettings): Bucket {
  const bucket = new Bucket(scope, 'AccessLogsBucket', {
    ...PRIVATE_BUCKET,
    encryption: BucketEncryption.S3_MANAGED,
    lifecycleRules: [{
      expiration: Duration.days(environment.logRetention),
      noncurrentVersionExpiration: Duration.days(environment.logRetention),
    }],
    replicationRules: [{ destination: createLogArchiveBucket(scope, environment), priority: 0, deleteMarkerReplication: false }],
    removalPolicy: environment.removalPolicy,
  });
  // CDK names the source bucket in its log delivery Allow only when both are in one stack (the reports bucket is in a
  // nested one): this refuses delivery on behalf of any other account's bucket, whatever the Allows say.
  bucket.addToResourcePolicy(new PolicyStatement({
    sid: 'LogDeliveryForThisAccountOnly',
    effect: Effect.DENY,
    principals: [new ServicePrincipal('logging.s3.amazonaws.com')],
    actions: ['s3:PutObject'],
    resources: [bucket.arnForObjects('*')],
    conditions: { StringNotEquals: { 'aws:SourceAccount': Stack.of(scope).account } },
  }));
  exemptFromRule(bucket, 'LOG-S3', 'The server access log destination: logging it into itself would log its own log writes forever.');
  return bucket;
}

/**
 * The write-once copy of the access logs: Object Lock with a default retention
 * of the log retention, in compliance mode where the environment retains its
 * data (nobody, the account root included, can shorten it), in governance mode
 * where it is destroyed with the stack (dev: `s3:BypassGovernanceRetention` lets
 * an operator empty it). Delete markers are not replicated: deleting a log in
 * the access-logs bucket leaves the archive's copy as it was.
 */
function createLogArchiveBucket(scope: Construct, environment: EnvironmentSettings): Bucket {
  const days = Duration.days(environment.logRetention);
  const bucket = new Bucket(scope, 'LogArchiveBucket', {
    ...PRIVATE_BUCKET,
    encryption: BucketEncryption.S3_MANAGED,
    objectLockDefaultRetention: environment.removalPolicy === RemovalPolicy.RETAIN ? ObjectLockRetention.compliance(days) : ObjectLockRetention.governance(days),
    // Removed once the lock has run out, not before: S3 does not expire a locked version.
    lifecycleRules: [{ expiration: days, noncurrentVersionExpiration: days }],
    removalPolicy: environment.removalPolicy,
  });
  exemptFromRule(bucket, 'LOG-S3', 'The locked copy of the access logs: its only writer is replication from the access-logs bucket, which is itself the log.');
  return bucket;
}

function createDocumentsBucket(scope: Construct, environment: EnvironmentSettings, key: IKey, accessLogs: Bucket, archiveDays: number | false): Bucket {
  const archive: LifecycleRule[] = archiveDays === false ? [] : [{
    id: 'stored-documents-to-glacier-ir',
    // Evidence is read rarely after its first weeks, and retained files are kept two years: Glacier Instant
    // Retrieval stores them for about a sixth of Standard and still serves a download at once. Objects of
    // 128 KiB or less stay in Standard (Glacier IR bills each object as at least 128 KiB). Arithmetic: docs/documents.md.
    prefix: DOCUMENT_OBJECT_PREFIX,
    objectSizeGreaterThan: 128 * 1024,
    transitions: [{ storageClass: StorageClass.GLACIER_INSTANT_RETRIEVAL, transitionAfter: Duration.days(archiveDays) }],
  }];
  const bucket = new Bucket(scope, 'DocumentsBucket', {
    ...PRIVATE_BUCKET,
    encryption: BucketEncryption.KMS,
    encryptionKey: key,
    // S3 derives object keys from a short-lived bucket key instead of calling KMS for each object.
    bucketKeyEnabled: true,
    // Retained documents are locked per object (governance mode, set by the service); no default retention.
    objectLockEnabled: true,
    serverAccessLogsBucket: accessLogs,
    serverAccessLogsPrefix: 'documents-bucket/',
    lifecycleRules: [
      {
        id: 'noncurrent-versions',
        // A deleted document must not live on as an old version.
        noncurrentVersionExpiration: Duration.days(30),
        abortIncompleteMultipartUploadAfter: Duration.days(1),
        // Once the last version is gone, the delete marker is clutter.
        expiredObjectDeleteMarker: true,
      },
      ...archive,
      {
        id: 'abandoned-uploads',
        // An upload session lives minutes; the finalizer copies what it checked out of uploads/, then removes the upload.
        prefix: UPLOAD_OBJECT_PREFIX,
        expiration: Duration.days(1),
      },
    ],
    removalPolicy: environment.removalPolicy,
  });
  // CloudFormation's schema types ObjectSizeGreaterThan as a string of digits; the L2 construct writes a number, which
  // CloudFormation coerces with a warning at every synth. The rule's index is its place in lifecycleRules above.
  if (archive.length) (bucket.node.defaultChild as CfnBucket).addPropertyOverride('LifecycleConfiguration.Rules.1.ObjectSizeGreaterThan', String(128 * 1024));
  // Every object under the vault key: a write may leave the encryption to the bucket's default (the same key),
  // but one that names another (SSE-S3, or SSE-KMS under another key) is refused, whoever sends it.
  // A statement per condition: either alone refuses.
  const refused = { DenyOtherEncryption: { 's3:x-amz-server-side-encryption': 'aws:kms' }, DenyOtherEncryptionKey: { 's3:x-amz-server-side-encryption-aws-kms-key-id': key.keyArn } };
  for (const [sid, required] of Object.entries(refused)) {
    bucket.addToResourcePolicy(new PolicyStatement({ sid, effect: Effect.DENY, principals: [new AnyPrincipal()], actions: ['s3:PutObject'], resources: [bucket.arnForObjects('*')], conditions: { StringNotEqualsIfExists: required } }));
  }
  return bucket;
}

function nestedStack(scope: Construct, id: string, description: string): NestedStack {
  return new NestedStack(scope, id, { description });
}

function output(scope: Construct, id: string, value: string, description?: string): void {
  new CfnOutput(scope, id, { value, description });
}

/**
 * The rule the scan result function's trigger follows: GuardDuty's source, or
 * (your own scanner) the source its events carry, with the same detail-type
 * and detail shape.
 */
function withScanResultSource(triggers: readonly EventRuleTrigger[], source: string | undefined): readonly EventRuleTrigger[] {
  if (source === undefined) return triggers;
  return triggers.map((trigger) => (trigger.source === MALWARE_SCAN.source && trigger.detailType === MALWARE_SCAN.detailType ? { ...trigger, source } : trigger));
}
