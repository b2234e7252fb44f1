import { Duration } from 'aws-cdk-lib';
import { Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { EventRuleTrigger } from '#shared/platform/triggers.ts';
import { bindRoute } from './access.ts';
import type { ServiceResources } from './access.ts';
import { deadLetterQueue } from './dead-letter-queue.ts';
import { triggerFunction } from './functions.ts';
import type { FunctionSources } from './functions.ts';

export interface EventRuleTriggeredFunctionsProps extends FunctionSources {
  readonly triggers: readonly EventRuleTrigger[];
  readonly resources: ServiceResources;
}

/** How long EventBridge keeps retrying a failing delivery before the event goes to the dead-letter queue. */
const MAX_EVENT_AGE = Duration.hours(24);

/**
 * Functions that rules on the account's default bus invoke (GuardDuty's scan
 * results), from the same trigger table the local runtime's scanner feeds.
 * Each rule matches its source and detail-type for the documents bucket only.
 * Either failure ends in the dead-letter queue, never lost: an invocation
 * EventBridge cannot make (retried for a day), and one the function fails
 * (EventBridge invokes asynchronously, so Lambda retries it twice first; a
 * scan result that arrives before its record settles needs those retries).
 */
export class EventRuleTriggeredFunctions extends Construct {
  readonly deadLetterQueue: Queue;
  readonly functions: Array<{ name: string; fn: NodejsFunction }> = [];

  constructor(scope: Construct, id: string, props: EventRuleTriggeredFunctionsProps) {
    super(scope, id);
    this.deadLetterQueue = deadLetterQueue(this, props.environment);
    for (const trigger of props.triggers) {
      const fn = triggerFunction(this, trigger, props);
      bindRoute(fn, trigger.access, props.resources);
      this.functions.push({ name: trigger.handler, fn });
      fn.configureAsyncInvoke({ retryAttempts: 2, onFailure: new SqsDestination(this.deadLetterQueue) });
      new Rule(this, `${trigger.handler}-rule`, {
        description: `${trigger.detailType} for the documents bucket -> ${trigger.handler}`,
        eventPattern: {
          source: [trigger.source],
          detailType: [trigger.detailType],
          detail: { s3ObjectDetails: { bucketName: [props.resources[trigger.bucket].bucketName] } },
        },
        targets: [new LambdaFunction(fn, { deadLetterQueue: this.deadLetterQueue, maxEventAge: MAX_EVENT_AGE, retryAttempts: 185 })],
      });
    }
  }
}
