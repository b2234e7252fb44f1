import { Duration } from 'aws-cdk-lib';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import { Rule } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { BACKGROUND_FUNCTION_ACCESS } from '#shared/platform/function-environment.ts';
import type { WebhookQueue } from '#shared/platform/webhooks.ts';
import { WEBHOOK_QUEUES, WEBHOOK_QUEUE_TRIGGERS, WEBHOOK_RULE } from '#shared/platform/webhooks.ts';
import type { ServiceResources } from './access.ts';
import { bindRoute } from './access.ts';
import type { EnvironmentSettings } from './environments.ts';
import { pascalCase, triggerFunction } from './functions.ts';
import type { FunctionSources } from './functions.ts';

/**
 * The webhook queues (docs/webhooks.md): the intake queue the rule fills and
 * the delivery queue the fan-out fills, each with its dead-letter queue;
 * encrypted, TLS only. Built before the API's functions, since ping and
 * recover send to the delivery queue.
 */
export class WebhookQueues extends Construct {
  readonly queues: Record<WebhookQueue, Queue>;
  readonly deadLetterQueues: Record<WebhookQueue, Queue>;

  constructor(scope: Construct, id: string, environment: Pick<EnvironmentSettings, 'removalPolicy'>) {
    super(scope, id);
    const make = (name: WebhookQueue) => {
      const spec = WEBHOOK_QUEUES[name];
      const deadLetters = new Queue(this, `${pascalCase(spec.name)}DeadLetterQueue`, {
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: Duration.days(14),
        removalPolicy: environment.removalPolicy,
      });
      const queue = new Queue(this, `${pascalCase(spec.name)}Queue`, {
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: Duration.seconds(spec.retentionSeconds),
        visibilityTimeout: Duration.seconds(spec.visibilityTimeoutSeconds),
        deadLetterQueue: { queue: deadLetters, maxReceiveCount: spec.maxReceiveCount },
        removalPolicy: environment.removalPolicy,
      });
      return [queue, deadLetters] as const;
    };
    const [intake, intakeDead] = make('intake');
    const [delivery, deliveryDead] = make('delivery');
    this.queues = { intake, delivery };
    this.deadLetterQueues = { intake: intakeDead, delivery: deliveryDead };
  }
}

export interface WebhookDeliveryProps extends FunctionSources {
  readonly bus: IEventBus;
  readonly queues: WebhookQueues;
  readonly resources: ServiceResources;
}

/**
 * The rule (WEBHOOK_RULE, the one definition the local EventBridge stand-in
 * applies too) from the domain event bus to the intake queue, and the
 * fan-out and sender functions on their queues (WEBHOOK_QUEUE_TRIGGERS): batch
 * item failures reported, concurrency capped per mapping.
 */
export class WebhookDelivery extends Construct {
  readonly rule: Rule;
  readonly functions: Array<{ name: string; fn: NodejsFunction }> = [];

  constructor(scope: Construct, id: string, props: WebhookDeliveryProps) {
    super(scope, id);
    const { queues } = props.queues;
    this.rule = new Rule(this, WEBHOOK_RULE.name, {
      eventBus: props.bus,
      description: 'Domain events merchants may subscribe to, to the webhook intake queue',
      eventPattern: { source: [...WEBHOOK_RULE.eventPattern.source], detailType: [...WEBHOOK_RULE.eventPattern['detail-type']] },
      targets: [new SqsQueue(queues.intake, { messageGroupId: WEBHOOK_RULE.messageGroupIdPath })],
    });
    for (const trigger of WEBHOOK_QUEUE_TRIGGERS) {
      const access = BACKGROUND_FUNCTION_ACCESS[trigger.handler]!;
      const fn = triggerFunction(this, { handler: trigger.handler, sizing: trigger.sizing, summary: `Webhooks: ${trigger.handler === 'webhooks-fanout' ? 'events to per-endpoint messages' : 'signed delivery of one message'}` }, props);
      bindRoute(fn, access, props.resources);
      fn.addEventSource(
        new SqsEventSource(queues[trigger.queue], {
          batchSize: trigger.batchSize,
          maxBatchingWindow: trigger.maxBatchingWindowSeconds > 0 ? Duration.seconds(trigger.maxBatchingWindowSeconds) : undefined,
          reportBatchItemFailures: true,
          maxConcurrency: trigger.maximumConcurrency,
        }),
      );
      this.functions.push({ name: trigger.handler, fn });
    }
  }
}
