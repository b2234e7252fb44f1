/**
 * Every cdk-nag (AwsSolutions) suppression of the stack, in one place, each on
 * the narrowest construct and, for IAM5, on the exact wildcard it accepts. The
 * checks themselves run in test/infra/nag.test.ts. Suppressions are driven by the
 * route table through the API construct, so new routes are covered without edits
 * here, and a new kind of finding fails the test until someone justifies it.
 */
import type { CfnResource } from 'aws-cdk-lib';
import type { Method } from 'aws-cdk-lib/aws-apigateway';
import type { IRole } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { NagSuppressions } from 'cdk-nag';
import type { NagPackSuppression } from 'cdk-nag';
import type { PaymentsRestApi } from './api.ts';

export interface NagSubjects {
  readonly api: PaymentsRestApi;
  /** Functions that are not routes (S3-triggered, scheduled). */
  readonly otherFunctions?: readonly IFunction[];
  /** Functions fed by the table's stream (their event source mapping grants dynamodb:ListStreams on "*"). */
  readonly streamReaders?: readonly IFunction[];
  readonly paypalSecret?: IConstruct;
  /** GuardDuty Malware Protection's role (infra/malware-protection.ts). */
  readonly malwareProtectionRole?: IConstruct;
  readonly deadLetterQueues?: readonly IConstruct[];
  /** State machines whose roles invoke functions and read and write report objects. */
  readonly stateMachines?: readonly IConstruct[];
  /** Whether the stage has the web ACL (infra/waf.ts); without it APIG3 is suppressed with the environment's reason. */
  readonly webAcl?: boolean;
  /** The top-level stack (or a construct in it) and the nested stacks: each may hold CDK's bucket-notifications function. */
  readonly stacks: readonly IConstruct[];
}

export const REASONS = {
  xray:
    'X-Ray has no resource-level permissions: xray:PutTraceSegments and xray:PutTelemetryRecords only accept "*" '
    + '(added by Lambda active tracing). They let the function send trace segments, nothing else.',
  documentObjects:
    'Objects under the documents bucket\'s own key prefix (documents/* for stored files, uploads/* for upload '
    + 'sessions): object keys are generated per document, so the grant names the prefix, on this one bucket, for '
    + 'the single S3 action the route declares.',
  reportObjects:
    'Objects under one prefix of the Account Updater reports bucket: au-inbox/* (update files whose names the card '
    + 'networks choose, read by the check step and the Map\'s ItemReader), au-runs/* (one folder per run: batch results, '
    + 'the Map\'s result files, au:apply uploads), au-results/* (each file\'s summary beside it), au-reports/* (the '
    + 'export writes au-reports/org_<id>/<yyyy-mm>.csv for every organization). Each role gets only its own prefixes and actions.',
  stateMachineRole:
    'The Account Updater state machine\'s role: lambda:InvokeFunction on its three functions (CDK grants the ARN and '
    + 'ARN:* for versions), states:DescribeExecution/StopExecution on its own executions (Distributed Map child '
    + 'executions are created at run time), X-Ray and log delivery actions that accept only "*".',
  requestValidation:
    'Requests are validated in each function with zod (every field, unknown members rejected, all issues reported in '
    + 'the contract\'s 400 envelope). API Gateway models would duplicate those schemas and answer in another format.',
  waf:
    'This environment turns the web ACL off ("webAcl": false in cdk.json, dev, for cost); every other environment gets '
    + 'infra/waf.ts on the stage. Without it the stage is still throttled and every request passes the Lambda authorizer.',
  cognito:
    'Cognito is not the auth model: merchants call with HTTP Basic credentials (api_access_id:api_secure_key, stored '
    + 'as an HMAC under a KMS-derived key) and an organization header, checked by a Lambda REQUEST authorizer cached on Authorization and the caller\'s address.',
  mockMethod:
    'MOCK method answering a fixed error envelope (404 at the root, 405 for an unsupported method on a known path); it '
    + 'reaches no integration and returns no data, and must answer unauthenticated callers as API Gateway would.',
  publicRoute:
    'Route declared public (auth: "none") in the route table, such as GET /v3/openapi.json (the API description); it '
    + 'reads no tenant data.',
  paypalSecretRotation:
    'PayPal REST client credentials are issued and rotated in the PayPal developer dashboard; no Lambda rotation '
    + 'function can mint new ones. Rotation is an operator runbook step (docs/operations.md): put the new pair, '
    + 'the functions read it at their next cold start.',
  streamList:
    'Lambda\'s DynamoDB event source mapping needs dynamodb:ListStreams, which has no resource-level permissions '
    + '(CDK grants it on "*"); it lists stream ARNs only. Reading records (DescribeStream, GetShardIterator, GetRecords) '
    + 'is granted on this table\'s stream alone. The same "*" also carries the X-Ray actions of active tracing.',
  deadLetterQueue:
    'This queue is itself the dead-letter destination of failed asynchronous invocations; a dead-letter queue for '
    + 'it would have nothing to catch. Its depth raises an alarm.',
  logArchive:
    'The write-once copy of the server access logs (Object Lock): logging its own reads would fill a bucket that cannot '
    + 'be emptied before the retention ends with logs of logs; the access-logs bucket it copies is itself the log.',
  logReplication:
    'The replication role CDK creates for the access-logs bucket: it reads every object version of that one bucket and '
    + 'replicates into the log archive, whose object names S3 log delivery chooses; both wildcards are one bucket\'s objects.',
  malwareProtectionRole:
    'The role AWS documents for a GuardDuty Malware Protection plan: it scans and tags every object of the documents '
    + 'bucket (object keys are generated per document, so objects are named by bucket/*), and manages EventBridge rules '
    + 'GuardDuty creates under its fixed name prefix DO-NOT-DELETE-AmazonGuardDutyMalwareProtectionS3*, conditioned on '
    + 'events:ManagedBy. Only the GuardDuty plan service principal can assume it.',
  bucketNotificationsHandler:
    'CDK\'s own singleton that applies the bucket notification configuration at deploy time (custom resource); its '
    + 'role only writes its logs and puts the notification configuration of this stack\'s bucket.',
} as const;

export function applyNagSuppressions({ api, otherFunctions = [], streamReaders = [], paypalSecret, malwareProtectionRole, deadLetterQueues = [], stateMachines = [], webAcl = false, stacks }: NagSubjects): void {
  if (malwareProtectionRole) {
    NagSuppressions.addResourceSuppressions(malwareProtectionRole, [
      {
        id: 'AwsSolutions-IAM5',
        reason: REASONS.malwareProtectionRole,
        appliesTo: [
          'Resource::arn:aws:events:<AWS::Region>:<AWS::AccountId>:rule/DO-NOT-DELETE-AmazonGuardDutyMalwareProtectionS3*',
          { regex: '/^Resource::<DocumentsBucket[A-Za-z0-9]+\\.Arn>\\/\\*$/g' },
        ],
      },
    ], true);
  }
  const restApi = api.api;
  const functions: IFunction[] = [
    ...api.routeFunctions.map(({ fn }) => fn),
    ...(api.authorizerFunction ? [api.authorizerFunction] : []),
    ...otherFunctions,
  ];
  if (paypalSecret) NagSuppressions.addResourceSuppressions(paypalSecret, [{ id: 'AwsSolutions-SMG4', reason: REASONS.paypalSecretRotation }]);
  for (const queue of deadLetterQueues) NagSuppressions.addResourceSuppressions(queue, [{ id: 'AwsSolutions-SQS3', reason: REASONS.deadLetterQueue }]);
  for (const machine of stateMachines) {
    NagSuppressions.addResourceSuppressions(machine, [
      { id: 'AwsSolutions-IAM5', reason: REASONS.stateMachineRole },
      { id: 'AwsSolutions-IAM5', reason: REASONS.reportObjects, appliesTo: [{ regex: '/^Resource::<AccountUpdaterReportsBucket[A-Za-z0-9]+\\.Arn>\\/(au-inbox|au-runs)\\/\\*$/g' }] },
    ], true);
  }
  // The service's own constructs (the log buckets) and its stacks' (CDK's per-stack singletons).
  for (const child of [...new Set(stacks.flatMap((scope) => [scope, Stack.of(scope)]))].flatMap((scope) => scope.node.children)) {
    if (child.node.id === 'LogArchiveBucket') NagSuppressions.addResourceSuppressions(child, [{ id: 'AwsSolutions-S1', reason: REASONS.logArchive }]);
    if (child.node.id === 'AccessLogsBucket') {
      NagSuppressions.addResourceSuppressions(child.node.findChild('ReplicationRole'), [{
        id: 'AwsSolutions-IAM5',
        reason: REASONS.logReplication,
        appliesTo: [{ regex: '/^Resource::<(AccessLogsBucket|LogArchiveBucket)[A-Za-z0-9]+\\.Arn>\\/\\*$/g' }],
      }], true);
    }
    if (!child.node.id.startsWith('BucketNotificationsHandler')) continue;
    NagSuppressions.addResourceSuppressions(child, [{
      id: 'AwsSolutions-IAM4',
      reason: REASONS.bucketNotificationsHandler,
      appliesTo: ['Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole'],
    }], true);
  }

  for (const fn of functions) {
    NagSuppressions.addResourceSuppressions(fn.role as IRole, [
      { id: 'AwsSolutions-IAM5', reason: REASONS.xray, appliesTo: ['Resource::*'] },
      {
        id: 'AwsSolutions-IAM5',
        reason: REASONS.documentObjects,
        // The documents bucket is the parent's: a nested stack's policy names it through a parameter (`<referenceto...DocumentsBucket...Arn>`).
        appliesTo: [{ regex: '/^Resource::<(referenceto[A-Za-z0-9-]*)?DocumentsBucket[A-Za-z0-9]+(\\.)?Arn>\\/(documents|uploads)\\/\\*$/g' }],
      },
      {
        id: 'AwsSolutions-IAM5',
        reason: REASONS.reportObjects,
        appliesTo: [{ regex: '/^Resource::<AccountUpdaterReportsBucket[A-Za-z0-9]+\\.Arn>\\/(au-inbox|au-runs|au-results|au-reports)\\/\\*$/g' }],
      },
    ], true);
  }

  for (const fn of streamReaders) {
    NagSuppressions.addResourceSuppressions(fn.role as IRole, [{ id: 'AwsSolutions-IAM5', reason: REASONS.streamList, appliesTo: ['Resource::*'] }], true);
  }

  NagSuppressions.addResourceSuppressions(restApi.node.defaultChild as CfnResource, [{ id: 'AwsSolutions-APIG2', reason: REASONS.requestValidation }]);
  if (!webAcl) NagSuppressions.addResourceSuppressions(restApi.deploymentStage.node.defaultChild as CfnResource, [{ id: 'AwsSolutions-APIG3', reason: REASONS.waf }]);

  const cognito: NagPackSuppression = { id: 'AwsSolutions-COG4', reason: REASONS.cognito };
  const suppressMethod = (method: Method, suppressions: NagPackSuppression[]) =>
    NagSuppressions.addResourceSuppressions(method.node.defaultChild as CfnResource, suppressions);
  for (const method of api.mockMethods) suppressMethod(method, [cognito, { id: 'AwsSolutions-APIG4', reason: REASONS.mockMethod }]);
  for (const { route, method } of api.routeFunctions) {
    suppressMethod(method, route.auth === 'none' ? [cognito, { id: 'AwsSolutions-APIG4', reason: REASONS.publicRoute }] : [cognito]);
  }
}
