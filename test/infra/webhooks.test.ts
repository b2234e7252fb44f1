import { fileURLToPath } from 'node:url';
import type { Template } from 'aws-cdk-lib/assertions';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_QUEUES, WEBHOOK_QUEUE_TRIGGERS, WEBHOOK_RULE } from '#shared/platform/webhooks.ts';
import { actionsOf, environmentOf, resourcesOfType, roleStatements, settings, synthesize } from './template-helpers.ts';

const functionsDir = fileURLToPath(new URL('./fixtures/functions', import.meta.url));
const SYNTH_TIMEOUT_MS = 180_000;

/** The WebhooksStack (infra/webhooks.ts) as deployed with its parent: queues, rule, mappings, grants, alarms. */
describe('webhook delivery in the stack', () => {
  let template: Template;
  const queueId = (name: string) => {
    const ids = Object.keys(resourcesOfType(template, 'AWS::SQS::Queue')).filter((id) => id.startsWith(`WebhookQueues${name}`));
    expect(ids, name).toHaveLength(1);
    return ids[0]!;
  };
  const functionId = (handler: string) => Object.keys(resourcesOfType(template, 'AWS::Lambda::Function')).find((id) => id.startsWith(`WebhookDelivery${handler}`))!;
  beforeAll(() => {
    template = synthesize(settings('prod'), { routes: [], s3Triggers: [], streamTriggers: [], functionsDir });
  }, SYNTH_TIMEOUT_MS);

  it('keeps each queue encrypted, TLS only, with its retention, visibility and redrive to its own dead-letter queue', () => {
    for (const [name, spec] of [['WebhookIntake', WEBHOOK_QUEUES.intake], ['WebhookDelivery', WEBHOOK_QUEUES.delivery]] as const) {
      const queue = resourcesOfType(template, 'AWS::SQS::Queue')[queueId(`${name}Queue`)]!;
      expect(queue.Properties).toMatchObject({
        SqsManagedSseEnabled: true,
        MessageRetentionPeriod: spec.retentionSeconds,
        VisibilityTimeout: spec.visibilityTimeoutSeconds,
        RedrivePolicy: { maxReceiveCount: spec.maxReceiveCount, deadLetterTargetArn: { 'Fn::GetAtt': [queueId(`${name}DeadLetterQueue`), 'Arn'] } },
      });
      expect(resourcesOfType(template, 'AWS::SQS::Queue')[queueId(`${name}DeadLetterQueue`)]!.Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 86_400 });
    }
    // The delivery queue outlives the retry schedule (about 3.2 days) with margin.
    expect(WEBHOOK_QUEUES.delivery.retentionSeconds).toBe(14 * 86_400);
    const policies = JSON.stringify(resourcesOfType(template, 'AWS::SQS::QueuePolicy'));
    expect(policies).toContain('aws:SecureTransport');
  });

  it('routes the rule’s events from the domain bus to the intake queue', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      EventBusName: Match.anyValue(),
      EventPattern: { source: [...WEBHOOK_RULE.eventPattern.source], 'detail-type': [...WEBHOOK_RULE.eventPattern['detail-type']] },
      // A fair queue grouped by organization: EventBridge fills the group from the event's path.
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [queueId('WebhookIntakeQueue'), 'Arn'] }, SqsParameters: { MessageGroupId: '$.detail.organization_id' } })],
    });
    expect(WEBHOOK_RULE.eventPattern['detail-type']).toContain('Document Scanned');
  });

  it('maps each queue to its function with batch item failures and a maximum concurrency', () => {
    for (const trigger of WEBHOOK_QUEUE_TRIGGERS) {
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        EventSourceArn: { 'Fn::GetAtt': [queueId(trigger.queue === 'intake' ? 'WebhookIntakeQueue' : 'WebhookDeliveryQueue'), 'Arn'] },
        FunctionName: { Ref: functionId(trigger.handler === 'webhooks-fanout' ? 'WebhooksFanout' : 'WebhooksSend') },
        BatchSize: trigger.batchSize,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: trigger.maximumConcurrency },
      });
    }
  });

  it('grants the fan-out and the sender their queues only, and the sender the vault key for opening secrets', () => {
    const fanout = roleStatements(template, functionId('WebhooksFanout'));
    const sender = roleStatements(template, functionId('WebhooksSend'));
    expect(actionsOf(fanout)).toEqual(expect.arrayContaining(['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:SendMessage']));
    expect(actionsOf(fanout)).not.toContain('kms:Decrypt');
    const sendTo = (statements: typeof fanout) => statements.filter((statement) => actionsOf([statement]).includes('sqs:SendMessage')).map((statement) => JSON.stringify(statement.Resource));
    expect(sendTo(fanout)).toEqual([JSON.stringify({ 'Fn::GetAtt': [queueId('WebhookDeliveryQueue'), 'Arn'] })]);
    expect(sendTo(sender)).toEqual([JSON.stringify({ 'Fn::GetAtt': [queueId('WebhookDeliveryQueue'), 'Arn'] })]);
    expect(actionsOf(sender)).toEqual(expect.arrayContaining(['sqs:ChangeMessageVisibility', 'kms:Decrypt']));
    // The stack never allows loopback receivers nor shortens the retry schedule: only the local runtime sets those.
    for (const handler of ['WebhooksFanout', 'WebhooksSend']) {
      const variables = environmentOf(template, functionId(handler));
      expect(variables.WEBHOOK_ALLOW_LOOPBACK, handler).toBeUndefined();
      expect(variables.WEBHOOK_LATER_RETRY_CAP_SECONDS, handler).toBeUndefined();
      expect(variables.WEBHOOK_DELIVERY_QUEUE_URL, handler).toEqual({ Ref: queueId('WebhookDeliveryQueue') });
    }
  });

  it('keeps delivery state in a table of its own, without stream or index, and writes there only the delivery item kinds', () => {
    const [deliveriesId, ...others] = Object.keys(resourcesOfType(template, 'AWS::DynamoDB::Table')).filter((id) => id.startsWith('WebhookDeliveriesTable'));
    expect(others).toEqual([]);
    const table = resourcesOfType(template, 'AWS::DynamoDB::Table')[deliveriesId!]!.Properties;
    expect(table).toMatchObject({
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
      SSESpecification: { SSEEnabled: true },
    });
    // No stream: its writes are no change records for the event publisher to read past; no index: every read is by key.
    expect(table.StreamSpecification).toBeUndefined();
    expect(table.GlobalSecondaryIndexes).toBeUndefined();
    const onDeliveries = (statements: ReturnType<typeof roleStatements>) => statements.filter((statement) => JSON.stringify(statement.Resource).includes(deliveriesId!));
    const delivery = ['WHL#*', 'WHH#*', 'WHA#*', 'WHS#*', 'WHP#*'];
    for (const handler of ['WebhooksFanout', 'WebhooksSend']) {
      const statements = roleStatements(template, functionId(handler));
      expect(environmentOf(template, functionId(handler)).WEBHOOK_TABLE_NAME, handler).toEqual({ Ref: deliveriesId });
      for (const statement of onDeliveries(statements).filter((candidate) => actionsOf([candidate]).some((action) => ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'].includes(action)))) {
        const keys = (statement.Condition as { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': string[] } })['ForAllValues:StringLike']['dynamodb:LeadingKeys'];
        expect(keys.every((key) => delivery.includes(key)), handler).toBe(true);
      }
    }
    // The sender marks endpoints failing or disabled on the main table; the fan-out only reads endpoints there.
    const mainWrites = (handler: string) => roleStatements(template, functionId(handler)).filter((statement) => !JSON.stringify(statement.Resource).includes(deliveriesId!) && actionsOf([statement]).includes('dynamodb:UpdateItem'));
    expect(mainWrites('WebhooksFanout')).toEqual([]);
    expect(mainWrites('WebhooksSend').map((statement) => JSON.stringify(statement.Condition))).toEqual([JSON.stringify({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['WHE#*'] } })]);
  });

  it('alarms on the dead-letter queues, the intake queue’s oldest message and the deliveries table’s throttles', () => {
    const names = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm')).map((alarm) => String(alarm.Properties.AlarmName));
    for (const name of ['webhook-intake-dlq-depth', 'webhook-delivery-dlq-depth', 'webhook-intake-oldest-message', 'webhook-deliveries-throttles']) expect(names.some((candidate) => candidate.endsWith(name)), name).toBe(true);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ApproximateAgeOfOldestMessage', Threshold: 300 });
  });
});
