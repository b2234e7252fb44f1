import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AttributeType, StreamViewType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { DomainEvents } from '#infra/domain-events.ts';
import { streamTriggers } from '#shared/platform/triggers.ts';
import { actionsOf, environmentOf, resourcesOfType, roleStatements, settings, synthesize } from './template-helpers.ts';

const functionsDir = fileURLToPath(new URL('./fixtures/functions', import.meta.url));
const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };
const SYNTH_TIMEOUT_MS = 120_000;

const onlyIdOf = (template: Template, type: string, prefix: string) => {
  const ids = Object.keys(resourcesOfType(template, type)).filter((id) => id.startsWith(prefix));
  expect(ids, `${type} ${prefix}`).toHaveLength(1);
  return ids[0]!;
};

describe('DomainEvents construct', () => {
  let template: Template;
  let publisher: string;
  let bus: string;
  let queue: string;
  let table: string;
  beforeAll(() => {
    const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'DomainEventsTest');
    new Table(stack, 'Table', {
      partitionKey: { name: 'pk', type: AttributeType.STRING },
      sortKey: { name: 'sk', type: AttributeType.STRING },
      stream: StreamViewType.NEW_AND_OLD_IMAGES,
    });
    const tableConstruct = stack.node.findChild('Table') as Table;
    new DomainEvents(stack, 'DomainEvents', { environment: settings('dev'), projectRoot, functionsDir, table: tableConstruct, triggers: streamTriggers });
    template = Template.fromStack(stack);
    publisher = onlyIdOf(template, 'AWS::Lambda::Function', 'DomainEventsEventsPublishFunction');
    bus = onlyIdOf(template, 'AWS::Events::EventBus', 'DomainEventsBus');
    queue = onlyIdOf(template, 'AWS::SQS::Queue', 'DomainEventsDeadLetterQueue');
    table = onlyIdOf(template, 'AWS::DynamoDB::Table', 'Table');
  }, SYNTH_TIMEOUT_MS);

  it('creates a custom bus and a publisher on the project runtime that knows only the bus name', () => {
    expect(resourcesOfType(template, 'AWS::Events::EventBus')[bus]!.Properties.Name).toEqual(expect.any(String));
    expect(resourcesOfType(template, 'AWS::Lambda::Function')[publisher]!.Properties).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], Timeout: 60, TracingConfig: { Mode: 'Active' } });
    expect(environmentOf(template, publisher)).toMatchObject({ EVENT_BUS_NAME: { Ref: bus } });
    expect(environmentOf(template, publisher).TABLE_NAME).toBeUndefined();
  });

  it('feeds it from the table stream: filtered to paymethod and document items, batched, bisected, retried, then dead-lettered', () => {
    const [mapping] = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping'));
    expect(mapping!.Properties).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': [table, 'StreamArn'] },
      FunctionName: { Ref: publisher },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 100,
      MaximumBatchingWindowInSeconds: 1,
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRetryAttempts: 10,
      MaximumRecordAgeInSeconds: 86_400,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queue, 'Arn'] } } },
    });
    const patterns = (mapping!.Properties.FilterCriteria as { Filters: Array<{ Pattern: string }> }).Filters.map((filter) => JSON.parse(filter.Pattern) as unknown);
    expect(patterns).toEqual([
      { dynamodb: { Keys: { pk: { S: [{ prefix: 'MTH#' }] } } } },
      { dynamodb: { Keys: { pk: { S: [{ prefix: 'DOC#' }] } } } },
    ]);
  });

  it('grants PutEvents on this bus only, stream reads on this stream only, and sending to its dead-letter queue; no table access', () => {
    const statements = roleStatements(template, publisher);
    const putEvents = statements.filter((statement) => [statement.Action].flat().includes('events:PutEvents'));
    expect(putEvents).toHaveLength(1);
    expect(putEvents[0]!.Resource).toEqual({ 'Fn::GetAtt': [bus, 'Arn'] });
    const streamRead = statements.filter((statement) => [statement.Action].flat().includes('dynamodb:GetRecords'));
    expect(streamRead.map((statement) => statement.Resource)).toEqual([{ 'Fn::GetAtt': [table, 'StreamArn'] }]);
    expect(actionsOf(statements).filter((action) => action.startsWith('dynamodb:')).sort()).toEqual(
      ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'].sort(),
    );
    const sqs = statements.filter((statement) => [statement.Action].flat().some((action) => action.startsWith('sqs:')));
    expect(sqs.map((statement) => statement.Resource)).toEqual([{ 'Fn::GetAtt': [queue, 'Arn'] }]);
    expect(actionsOf(statements).filter((action) => !/^(dynamodb|sqs|xray|logs):/.test(action))).toEqual(['events:PutEvents']);
  });

  it('keeps the dead-letter queue encrypted, TLS-only, for 14 days', () => {
    expect(resourcesOfType(template, 'AWS::SQS::Queue')[queue]!.Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 1_209_600 });
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: queue }],
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
  });

  it('ships a disabled example rule on the bus, matching Account Updater changes', () => {
    const [rule] = Object.values(resourcesOfType(template, 'AWS::Events::Rule'));
    expect(rule!.Properties).toMatchObject({
      State: 'DISABLED',
      EventBusName: { Ref: bus },
      EventPattern: { source: ['payments.paymethods'], 'detail-type': ['Paymethod Account Updated'] },
    });
  });
});

describe('domain events in the stack (prod)', () => {
  let template: Template;
  beforeAll(() => {
    template = synthesize(settings('prod'), { routes: [], functionsDir });
  }, SYNTH_TIMEOUT_MS);

  it('turns on the table stream with both images', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', { StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' } });
  });

  it('alarms on the dead-letter queue depth and on the publisher falling behind the stream', () => {
    const alarms = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm')).map((alarm) => alarm.Properties);
    const depth = alarms.find((alarm) => alarm.AlarmName === 'PaymentsApi-prod-events-dlq-depth');
    expect(depth).toMatchObject({ MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 1 });
    const age = alarms.find((alarm) => alarm.AlarmName === 'PaymentsApi-prod-events-publish-iterator-age');
    expect(age).toMatchObject({ Threshold: 60_000, EvaluationPeriods: 3, DatapointsToAlarm: 2 });
    expect(JSON.stringify(age!.Metrics)).toMatch(/"MetricName":"IteratorAge","Namespace":"AWS\/Lambda".*"Stat":"Maximum"/);
    expect(String(age!.AlarmDescription)).toMatch(/Runbook: docs\/operations\.md#domain-events-behind/);
  });

  it('outputs the bus name and ARN for consumers', () => {
    const outputs = template.toJSON().Outputs as Record<string, unknown>;
    expect(Object.keys(outputs)).toEqual(expect.arrayContaining(['EventBusName', 'EventBusArn']));
  });
});
