/**
 * The local counterpart of Lambda's SQS event source mappings
 * (shared/platform/webhooks.ts WEBHOOK_QUEUE_TRIGGERS, which CDK turns into
 * the real ones): up to MaximumConcurrency invocations at once, each with a
 * batch of at most batchSize messages, and ReportBatchItemFailures: what the
 * handler did not report failed is deleted; a reported one stays, to show
 * again when its visibility (as the handler set it, or the queue's timeout)
 * ends. A failed invocation leaves the whole batch to show again.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { QueueTrigger } from '#shared/platform/webhooks.ts';
import { lambdaContext } from './lambda-context.ts';
import type { LocalQueue } from './sqs-standin.ts';

type Handler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>;

export interface QueuePollerOptions {
  readonly triggers: readonly QueueTrigger[];
  readonly queueOf: (trigger: QueueTrigger) => { queue: LocalQueue; arn: string };
  readonly functionsDir: string;
  readonly invokeAs: <R>(functionName: string, invoke: () => Promise<R>) => Promise<R>;
  readonly log?: (line: Record<string, unknown>) => void;
}

export function startQueuePollers(options: QueuePollerOptions): { close(): Promise<void> } {
  let closed = false;
  const workers: Array<Promise<void>> = [];
  for (const trigger of options.triggers) {
    const { queue, arn } = options.queueOf(trigger);
    let loaded: Promise<Handler> | undefined;
    const handler = () =>
      (loaded ??= options.invokeAs(trigger.handler, () => import(pathToFileURL(path.join(options.functionsDir, `${trigger.handler}.ts`)).href)).then(
        ({ handler: run }: { handler: Handler }): Handler => (event, context) => options.invokeAs(trigger.handler, () => run(event, context)),
      ));
    const worker = async () => {
      while (!closed) {
        const messages = queue.receive(trigger.batchSize);
        if (messages.length === 0) {
          await queue.waitForMessages(250);
          continue;
        }
        const event: SQSEvent = {
          Records: messages.map((message) => ({
            messageId: message.messageId,
            receiptHandle: message.receiptHandle,
            body: message.body,
            attributes: message.attributes as never,
            messageAttributes: {},
            md5OfBody: '',
            eventSource: 'aws:sqs',
            eventSourceARN: arn,
            awsRegion: 'us-east-1',
          })),
        };
        try {
          const response = await (await handler())(event, lambdaContext(trigger.handler, trigger.sizing));
          const failed = new Set((response?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
          for (const message of messages) if (!failed.has(message.messageId)) queue.delete(message.receiptHandle);
        } catch (error) {
          options.log?.({ level: 'ERROR', message: 'queue-triggered invocation failed', function: trigger.handler, error: error instanceof Error ? error.message : String(error) });
        }
      }
    };
    for (let index = 0; index < trigger.maximumConcurrency; index += 1) workers.push(worker());
  }
  return {
    async close() {
      closed = true;
      await Promise.allSettled(workers);
    },
  };
}
