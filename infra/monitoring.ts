import { Annotations, ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { IMetric, IWidget } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import {
  AUTHENTICATION_REFUSED_METRIC,
  BUSINESS_METRICS,
  METRICS_NAMESPACE,
  ROUTE_METRICS,
  SERVICE_NAME,
} from '#shared/observability/catalog.ts';
import type { BusinessMetricName } from '#shared/observability/catalog.ts';
import type { EnvironmentSettings } from './environments.ts';
import { pascalCase } from './functions.ts';
import { scopedKey } from './keys.ts';

const FIVE_MINUTES = Duration.minutes(5);
/** Below this many requests in five minutes a 5xx rate says more about chance than about the service. */
const MIN_REQUESTS_FOR_ERROR_RATE = 20;

export interface MonitoringProps {
  readonly environment: EnvironmentSettings;
  readonly stage: Stage;
  readonly table: ITable;
  readonly tableIndexNames: readonly string[];
  /** A topic of the team's: the alarms notify it, and no topic or topic key is created. */
  readonly topic?: ITopic;
  /** A key of the team's for the topic created here. */
  readonly topicKey?: IKey;
}

/** A DynamoDB table on the dashboard, with its throttle alarm. */
interface WatchedTable {
  /** Prefix of its graphs' titles. */
  readonly title: string;
  /** Its throttle alarm's name (and, past ten metrics, `<name>-2`...). */
  readonly alarmName: string;
  readonly description: string;
  readonly indexNames?: readonly string[];
  /** The operations whose latency is graphed. */
  readonly operations: readonly string[];
}

export interface WatchedFunction {
  /** Short, stable name used in alarm names and graph labels (a route's handler name, `authorizer`, `finalizer`...). */
  readonly name: string;
  readonly fn: IFunction;
  /** A custom metric (this namespace, no dimensions beyond service and environment) counting invocations that end in an error by design. */
  readonly errorsByDesign?: string;
}

/**
 * Alarms, the alarm topic and the dashboard. Everything that can fail gets an
 * alarm when the environment has alarms on; with alarms off, nothing that costs
 * per alarm is created, and the hooks below do nothing but add graphs.
 *
 * Features plug in through the hooks: `watchFunction` for a function that is not
 * a route (routes are watched by the stack), `alarmOnQueueDepth` for a DLQ,
 * `alarmOnAccountUpdaterExportFailure` for the AU export, `alarmOnAccountUpdaterApplyFailure`
 * for its apply state machine, `watchHistoryTable` for its history.
 */
export class Monitoring extends Construct {
  readonly topic: ITopic;
  readonly dashboard: Dashboard;
  readonly alarms: Alarm[] = [];
  private readonly environment: EnvironmentSettings;
  private readonly watched: WatchedFunction[] = [];

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const { environment } = props;
    this.environment = environment;

    this.topic = props.topic ?? this.createTopic(props.topicKey);

    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `PaymentsApi-${environment.name}`,
      defaultInterval: Duration.hours(3),
    });

    this.watchApi(props.stage);
    this.watchTable(props.table, {
      title: 'DynamoDB',
      alarmName: 'dynamodb-throttles',
      description: 'DynamoDB throttled reads or writes on the table or an index. Runbook: docs/operations.md#dynamodb-throttles',
      indexNames: props.tableIndexNames,
      operations: ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'TransactWriteItems'],
    });
    this.dashboard.addWidgets(this.businessWidget(), this.authenticationWidget());
  }

  /** The service's own alarm topic, encrypted, publishable by this account's alarms only; its subscriber the environment's address. */
  private createTopic(key?: IKey): Topic {
    const { environment } = this;
    // CloudWatch cannot publish to a topic encrypted with the AWS managed SNS key: a key of our own, usable by CloudWatch only.
    const topicKey = key ?? scopedKey(this, 'AlarmTopicKey', {
      description: `Payments ${environment.name}: encrypts the alarm topic`,
      enableKeyRotation: true,
      removalPolicy: environment.removalPolicy,
    });
    // Only this account's alarms: without the source conditions, CloudWatch acting for any account's alarm
    // could use the key (the confused deputy).
    const stack = Stack.of(this);
    topicKey.addToResourcePolicy(new PolicyStatement({
      sid: 'CloudWatchAlarmsPublish',
      principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
      conditions: {
        StringEquals: { 'aws:SourceAccount': stack.account },
        ArnLike: { 'aws:SourceArn': stack.formatArn({ service: 'cloudwatch', resource: 'alarm', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME }) },
      },
    }));
    const topic = new Topic(this, 'AlarmTopic', {
      displayName: `Payments API ${environment.name} alarms`,
      masterKey: topicKey,
      enforceSSL: true,
    });
    topic.addToResourcePolicy(new PolicyStatement({
      sid: 'CloudWatchAlarmsOfThisAccount',
      principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
    }));
    if (environment.alarms.email) topic.addSubscription(new EmailSubscription(environment.alarms.email));
    else if (environment.alarms.enabled) {
      // Alarms that reach nobody: a deploy of prod this way pages no one. A subscription made outside the stack
      // (a chat or paging integration) is fine, hence a warning, not an error; `cdk deploy --strict` refuses it.
      Annotations.of(this).addWarningV2('payments:alarmsWithoutDestination', `Alarms are on in "${environment.name}" but the alarm topic has no subscriber: set alarms.email in cdk.json or -c alarmEmail=<address>, or subscribe on-call to the AlarmTopicArn output before relying on it`);
    }
    return topic;
  }

  private get enabled(): boolean {
    return this.environment.alarms.enabled;
  }

  /** Per-route request, error and latency graphs from the middleware's metrics, for the routes of the route table. */
  watchRoutes(routeNames: readonly string[]): void {
    if (!routeNames.length) return;
    const byRoute = (metricName: string, statistic: string) =>
      routeNames.map((route) => this.customMetric(metricName, statistic, { route }, route));
    this.dashboard.addWidgets(
      new GraphWidget({ title: 'Per route: p99 latency (ms, in the function)', left: byRoute(ROUTE_METRICS.latency, 'p99'), width: 12 }),
      new GraphWidget({ title: 'Per route: requests', left: byRoute(ROUTE_METRICS.requests, 'Sum'), width: 12 }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({ title: 'Per route: 5xx answers', left: byRoute(ROUTE_METRICS.serverErrors, 'Sum'), width: 12 }),
      new GraphWidget({ title: 'Per route: 4xx answers', left: byRoute(ROUTE_METRICS.clientErrors, 'Sum'), width: 12 }),
    );
  }

  /**
   * Errors (uncaught exceptions, timeouts, crashes: the middleware answers
   * handled errors itself) and throttles of each function, alarmed one by one
   * so the alarm names the function; graphed together.
   */
  watchFunctions(functions: readonly WatchedFunction[]): void {
    if (!functions.length) return;
    for (const watched of functions) {
      this.watched.push(watched);
      const errors = watched.fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' });
      // The authorizer answers a refused credential by throwing (API Gateway's 401): those errors are not failures.
      const unexpected = watched.errorsByDesign
        ? new MathExpression({
            expression: 'FILL(errors, 0) - FILL(byDesign, 0)',
            usingMetrics: { errors, byDesign: this.customMetric(watched.errorsByDesign, 'Sum', {}, 'errors by design') },
            period: FIVE_MINUTES,
            label: `${watched.name}: errors not by design`,
          })
        : errors;
      this.alarm(`${watched.name}-errors`, unexpected, {
        threshold: 1,
        description: `Function ${watched.name} failed (uncaught error, timeout or out of memory). Runbook: docs/operations.md#function-errors`,
      });
      this.alarm(`${watched.name}-throttles`, watched.fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }), {
        threshold: 1,
        description: `Function ${watched.name} was throttled (reserved or account concurrency exhausted). Runbook: docs/operations.md#function-throttles`,
      });
    }
    const label = (name: string, metric: Metric) => metric.with({ label: name });
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Lambda: errors',
        left: functions.map(({ name, fn }) => label(name, fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }))),
        width: 8,
      }),
      new GraphWidget({
        title: 'Lambda: throttles',
        left: functions.map(({ name, fn }) => label(name, fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }))),
        width: 8,
      }),
      new GraphWidget({
        title: 'Lambda: p99 duration (ms)',
        left: functions.map(({ name, fn }) => label(name, fn.metricDuration({ period: FIVE_MINUTES, statistic: 'p99' }))),
        width: 8,
      }),
    );
  }

  /** One non-route function (the upload finalizer, the AU jobs): alarms on errors and throttles, and graphs. */
  watchFunction(name: string, fn: IFunction): void {
    this.watchFunctions([{ name, fn }]);
  }

  /**
   * A dead-letter queue (or any queue that should stay empty): alarms as soon as
   * a message is visible, and graphs its depth. Returns the alarm, or undefined
   * when alarms are off.
   */
  alarmOnQueueDepth(queue: IQueue, options: { name?: string; threshold?: number; runbook?: string } = {}): Alarm | undefined {
    const name = options.name ?? queue.node.id;
    const depth = queue.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: 'Maximum' });
    this.dashboard.addWidgets(new GraphWidget({ title: `Queue depth: ${name}`, left: [depth.with({ label: name })], width: 8 }));
    return this.alarm(`${name}-depth`, depth, {
      threshold: options.threshold ?? 1,
      description: `Queue ${name} holds messages that failed processing. Runbook: ${options.runbook ?? 'docs/operations.md#dead-letter-queue-depth'}`,
    });
  }

  /**
   * A queue whose oldest message waits too long (ApproximateAgeOfOldestMessage,
   * maximum over five minutes): its consumer is failing or starved.
   */
  alarmOnOldestMessage(queue: IQueue, options: { name: string; thresholdSeconds: number; runbook: string }): Alarm | undefined {
    const age = queue.metricApproximateAgeOfOldestMessage({ period: FIVE_MINUTES, statistic: 'Maximum' });
    this.dashboard.addWidgets(new GraphWidget({ title: `Oldest message: ${options.name}`, left: [age.with({ label: options.name })], width: 8 }));
    return this.alarm(`${options.name}-oldest-message`, age, {
      threshold: options.thresholdSeconds,
      description: `Queue ${options.name}'s oldest message waited ${options.thresholdSeconds} s or more. Runbook: ${options.runbook}`,
    });
  }

  /**
   * A stream consumer falling behind: alarms when the age of the newest record
   * it was handed (Lambda's IteratorAge, maximum over five minutes) stays at or
   * above `thresholdMs` in two of three periods. Records older than the
   * stream's 24 hours are lost, so this fires long before that.
   */
  alarmOnIteratorAge(name: string, fn: IFunction, options: { thresholdMs: number; runbook: string }): Alarm | undefined {
    const age = fn.metric('IteratorAge', { period: FIVE_MINUTES, statistic: 'Maximum', label: `${name} iterator age (ms)` });
    this.dashboard.addWidgets(new GraphWidget({ title: `Stream iterator age: ${name} (ms)`, left: [age], width: 8 }));
    return this.alarm(`${name}-iterator-age`, age, {
      threshold: options.thresholdMs,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      description: `Function ${name} is more than ${options.thresholdMs / 1000} s behind the table's stream. Runbook: ${options.runbook}`,
    });
  }

  /**
   * The Account Updater export failed: alarms on the `AccountUpdaterExportFailures`
   * business metric (the export records it, with recordBusinessMetric, for each
   * failed attempt) and, when the export function is given, on that function's errors.
   */
  alarmOnAccountUpdaterExportFailure(exportFunction?: IFunction): Alarm | undefined {
    const failures = this.customMetric('AccountUpdaterExportFailures', 'Sum', {}, 'AU export failures');
    const metric = exportFunction
      ? new MathExpression({
        expression: 'FILL(failures, 0) + FILL(errors, 0)',
        usingMetrics: { failures, errors: exportFunction.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }) },
        period: FIVE_MINUTES,
        label: 'AU export failures and errors',
      })
      : failures;
    this.dashboard.addWidgets(new GraphWidget({ title: 'Account Updater export failures', left: [metric], width: 8 }));
    return this.alarm('au-export-failure', metric, {
      threshold: 1,
      description: 'An Account Updater export run failed; card updates are not reaching the network. Runbook: docs/operations.md#account-updater-export-failure',
    });
  }

  /**
   * An Account Updater run that did not succeed: alarms on the apply state
   * machine's executions that failed (a map that failed ends in a Fail state
   * once its summary is written; a check or merge that failed after its
   * retries fails it too), timed out or were aborted (stopped part-way,
   * with no summary). A batch that failed within the map's tolerance fails
   * only its own child execution, which Step Functions counts under the Map
   * Run's own state machine ARN (`<machine>/<run>`), not this one: its lines
   * are in the summary's errors, and the run still succeeds.
   */
  alarmOnAccountUpdaterApplyFailure(stateMachine: IStateMachine): Alarm | undefined {
    const options = { period: FIVE_MINUTES, statistic: 'Sum' };
    const metric = new MathExpression({
      expression: 'FILL(failed, 0) + FILL(timedOut, 0) + FILL(aborted, 0)',
      usingMetrics: { failed: stateMachine.metricFailed(options), timedOut: stateMachine.metricTimedOut(options), aborted: stateMachine.metricAborted(options) },
      period: FIVE_MINUTES,
      label: 'AU runs failed, timed out or aborted',
    });
    this.dashboard.addWidgets(new GraphWidget({ title: 'Account Updater runs not succeeded', left: [metric], width: 8 }));
    return this.alarm('au-apply-failure', metric, {
      threshold: 1,
      description: 'An Account Updater run failed, timed out or was aborted; part of its file may not be applied. Runbook: docs/operations.md#account-updater-apply-failure',
    });
  }

  /**
   * A malware scan that could not decide (UNSUPPORTED, ACCESS_DENIED, FAILED):
   * its file is never served until an operator looks. Alarms on the
   * `DocumentScanFailures` business metric the scan-result function records,
   * and on that function's own errors.
   */
  alarmOnDocumentScanFailures(scanResultFunction: IFunction): Alarm | undefined {
    const failures = this.customMetric('DocumentScanFailures', 'Sum', {}, 'Document scans failed');
    const metric = new MathExpression({
      expression: 'FILL(failures, 0) + FILL(errors, 0)',
      usingMetrics: { failures, errors: scanResultFunction.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }) },
      period: FIVE_MINUTES,
      label: 'Document scans failed or not recorded',
    });
    this.dashboard.addWidgets(new GraphWidget({ title: 'Document malware scans failed', left: [metric], width: 8 }));
    return this.alarm('document-scan-failure', metric, {
      threshold: 1,
      description: 'A document\'s malware scan failed or its result was not recorded; the file is not served. Runbook: docs/operations.md#document-scan-failures',
    });
  }

  private watchApi(stage: Stage): void {
    const requests = stage.metricCount({ period: FIVE_MINUTES, statistic: 'Sum' });
    const serverErrors = stage.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' });
    const clientErrors = stage.metricClientError({ period: FIVE_MINUTES, statistic: 'Sum' });
    const errorRate = new MathExpression({
      expression: `IF(requests >= ${MIN_REQUESTS_FOR_ERROR_RATE}, 100 * errors / requests, 0)`,
      usingMetrics: { requests, errors: serverErrors },
      period: FIVE_MINUTES,
      label: 'API 5xx rate (%)',
    });
    const latency = (statistic: string) => stage.metricLatency({ period: FIVE_MINUTES, statistic }).with({ label: `Latency ${statistic}` });

    this.alarm('api-5xx-rate', errorRate, {
      threshold: this.environment.alarms.serverErrorRatePercent,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      description: `More than ${this.environment.alarms.serverErrorRatePercent}% of API requests answered 5xx. Runbook: docs/operations.md#api-5xx-rate`,
    });
    this.alarm('api-p99-latency', stage.metricLatency({ period: FIVE_MINUTES, statistic: 'p99' }), {
      threshold: this.environment.alarms.p99LatencyMs,
      evaluationPeriods: 3,
      datapointsToAlarm: 3,
      description: `API Gateway p99 latency above ${this.environment.alarms.p99LatencyMs} ms for 15 minutes. Runbook: docs/operations.md#api-p99-latency`,
    });

    this.dashboard.addWidgets(new TextWidget({
      markdown: `# Payments API (${this.environment.name})\nRunbooks: docs/operations.md. Custom metrics: namespace \`${METRICS_NAMESPACE}\`, environment \`${this.environment.responseEnvironment}\`.`,
      width: 24,
      height: 2,
    }));
    // Rendered at synthesis: alarms that hooks add later still appear.
    if (this.enabled) this.dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24 }));
    this.dashboard.addWidgets(
      new GraphWidget({ title: 'API: requests, 4xx, 5xx', left: [requests, clientErrors, serverErrors], right: [errorRate], width: 12 }),
      new GraphWidget({ title: 'API: latency (ms)', left: [latency('p50'), latency('p90'), latency('p99')], width: 12 }),
    );
  }

  /**
   * The Account Updater's history table, watched like the paymethod table. Its
   * shards are sized for one organization's run at the design rate
   * (docs/account-updater.md), so a throttle means a run wrote faster, or less
   * evenly, than that.
   */
  watchHistoryTable(table: ITable): void {
    this.watchTable(table, {
      title: 'Account Updater history',
      alarmName: 'au-history-throttles',
      description: 'DynamoDB throttled the Account Updater history table. Runbook: docs/operations.md#au-history-throttles',
      operations: ['BatchWriteItem', 'PutItem', 'Query'],
    });
  }

  watchWebhookDeliveriesTable(table: ITable): void {
    this.watchTable(table, {
      title: 'Webhook deliveries',
      alarmName: 'webhook-deliveries-throttles',
      description: 'DynamoDB throttled the webhook deliveries table. Runbook: docs/webhooks.md#operations',
      operations: ['UpdateItem', 'Query', 'PutItem', 'BatchWriteItem'],
    });
  }

  /** Throttle alarms (reads and writes, the table and each index), consumed units and latency by operation. */
  private watchTable(table: ITable, watch: WatchedTable): void {
    const throttleMetrics: Record<string, IMetric> = {};
    const scopes: Array<Record<string, string>> = [{}, ...(watch.indexNames ?? []).map((index) => ({ GlobalSecondaryIndexName: index }))];
    scopes.forEach((dimensions, index) => {
      for (const kind of ['Read', 'Write']) {
        throttleMetrics[`${kind.toLowerCase()}${index}`] = table.metric(`${kind}ThrottleEvents`, {
          period: FIVE_MINUTES,
          statistic: 'Sum',
          dimensionsMap: { TableName: table.tableName, ...dimensions },
        });
      }
    });
    // CloudWatch alarms take at most 10 metrics per math expression: one alarm per group of ten.
    const entries = Object.entries(throttleMetrics);
    const groups = Array.from({ length: Math.ceil(entries.length / 10) }, (_, group) => Object.fromEntries(entries.slice(group * 10, group * 10 + 10)));
    const throttleGroups = groups.map((metrics, group) => new MathExpression({
      expression: Object.keys(metrics).map((id) => `FILL(${id}, 0)`).join(' + '),
      usingMetrics: metrics,
      period: FIVE_MINUTES,
      label: `${watch.title}: throttle events${groups.length > 1 ? ` (group ${group + 1})` : scopes.length > 1 ? ' (table and indexes)' : ''}`,
    }));
    throttleGroups.forEach((throttles, group) => this.alarm(group === 0 ? watch.alarmName : `${watch.alarmName}-${group + 1}`, throttles, {
      threshold: 1,
      description: watch.description,
    }));
    const consumed = (kind: 'Read' | 'Write') =>
      table.metric(`Consumed${kind}CapacityUnits`, { period: FIVE_MINUTES, statistic: 'Sum', label: `${kind} units` });
    this.dashboard.addWidgets(
      new GraphWidget({ title: `${watch.title}: consumed capacity units`, left: [consumed('Read'), consumed('Write')], width: 8 }),
      new GraphWidget({ title: `${watch.title}: throttle events`, left: throttleGroups, width: 8 }),
      new GraphWidget({
        title: `${watch.title}: average latency by operation (ms)`,
        left: watch.operations.map((operation) => table.metric('SuccessfulRequestLatency', {
          period: FIVE_MINUTES,
          statistic: 'Average',
          dimensionsMap: { TableName: table.tableName, Operation: operation },
          label: operation,
        })),
        width: 8,
      }),
    );
  }

  /** Every declared business metric, whatever its dimension values (a SEARCH, so new values appear by themselves). */
  private businessWidget(): IWidget {
    const left = (Object.keys(BUSINESS_METRICS) as BusinessMetricName[]).map((name) => {
      const dimensionNames = ['environment', 'service', ...BUSINESS_METRICS[name].dimensions].sort();
      const search = `SEARCH('{${METRICS_NAMESPACE},${dimensionNames.join(',')}} MetricName="${name}" environment="${this.environment.responseEnvironment}"', 'Sum', 300)`;
      // No label: CloudWatch names each series after its metric and dimension values.
      return new MathExpression({ expression: search, usingMetrics: {}, period: FIVE_MINUTES });
    });
    return new GraphWidget({ title: 'Business: paymethods, documents, Account Updater', left, width: 12 });
  }

  private authenticationWidget(): IWidget {
    return new GraphWidget({
      title: 'Authorizer: refused credentials',
      left: [this.customMetric(AUTHENTICATION_REFUSED_METRIC, 'Sum', {}, 'refused')],
      width: 12,
    });
  }

  private customMetric(metricName: string, statistic: string, dimensions: Record<string, string>, label: string): Metric {
    return new Metric({
      namespace: METRICS_NAMESPACE,
      metricName,
      dimensionsMap: { service: SERVICE_NAME, environment: this.environment.responseEnvironment, ...dimensions },
      statistic,
      period: FIVE_MINUTES,
      label,
    });
  }

  private alarm(
    id: string,
    metric: IMetric,
    options: { threshold: number; description: string; evaluationPeriods?: number; datapointsToAlarm?: number },
  ): Alarm | undefined {
    if (!this.enabled) return undefined;
    const alarm = new Alarm(this, `${pascalCase(id)}Alarm`, {
      alarmName: `PaymentsApi-${this.environment.name}-${id}`,
      alarmDescription: options.description,
      metric,
      threshold: options.threshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: options.evaluationPeriods ?? 1,
      datapointsToAlarm: options.datapointsToAlarm ?? options.evaluationPeriods ?? 1,
      // No traffic is no failure.
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const action = new SnsAction(this.topic);
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
    this.alarms.push(alarm);
    return alarm;
  }
}
