import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { EventType } from 'aws-cdk-lib/aws-s3';
import { LambdaDestination } from 'aws-cdk-lib/aws-s3-notifications';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { S3Trigger } from '#shared/platform/triggers.ts';
import { deadLetterQueue } from './dead-letter-queue.ts';
import { bindRoute } from './access.ts';
import type { ServiceResources } from './access.ts';
import { triggerFunction } from './functions.ts';
import type { FunctionSources } from './functions.ts';

export interface S3TriggeredFunctionsProps extends FunctionSources {
  readonly triggers: readonly S3Trigger[];
  readonly resources: ServiceResources;
}

/**
 * Functions invoked by bucket notifications, from the same trigger table the
 * local runtime wires to s3rver. S3 invokes asynchronously: Lambda retries
 * twice, then the event goes to a dead-letter queue instead of being lost.
 */
export class S3TriggeredFunctions extends Construct {
  readonly deadLetterQueue: Queue;
  readonly functions: Array<{ name: string; fn: NodejsFunction }> = [];

  constructor(scope: Construct, id: string, props: S3TriggeredFunctionsProps) {
    super(scope, id);
    this.deadLetterQueue = deadLetterQueue(this, props.environment);
    for (const trigger of props.triggers) {
      const fn = triggerFunction(this, trigger, props);
      bindRoute(fn, trigger.access, props.resources);
      this.functions.push({ name: trigger.handler, fn });
      fn.configureAsyncInvoke({ retryAttempts: 2, onFailure: new SqsDestination(this.deadLetterQueue) });
      const bucket = props.resources[trigger.bucket];
      for (const event of trigger.events) {
        if (event === 's3:ObjectCreated:*') bucket.addEventNotification(EventType.OBJECT_CREATED, new LambdaDestination(fn), { prefix: trigger.prefix });
      }
    }
  }
}
