import { Duration } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { EnvironmentSettings } from './environments.ts';

/**
 * Where an event goes once its retries are spent (an S3 trigger, the
 * Account Updater's export, a stream batch of the event publisher): the
 * stack's only kind of queue. Kept 14 days, SQS's longest, so a weekend
 * and a holiday still leave time to redrive; encrypted, TLS only. The stack
 * alarms on its depth (Monitoring.alarmOnQueueDepth).
 */
export function deadLetterQueue(scope: Construct, environment: Pick<EnvironmentSettings, 'removalPolicy'>): Queue {
  return new Queue(scope, 'DeadLetterQueue', {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
    // Failed events are what an operator replays: kept with the stack's data in prod, not lost with a replacement.
    removalPolicy: environment.removalPolicy,
  });
}
