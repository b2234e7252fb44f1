import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { deliver } from '#shared/domain/webhooks/delivery.ts';
import type { MessageRef } from '#shared/domain/webhooks/model.ts';
import { injectLambdaContext, logger } from '#shared/log/logger.ts';
import { deliveryDeps, deliveryQueue } from '#shared/wiring/webhook-delivery.ts';

/**
 * Delivery queue -> one attempt. A message to try again later stays in the
 * queue: its visibility is set to the wait (the retry schedule's step, or a
 * short wait for a slot or an earlier message of its record) and it is
 * reported as a batch item failure, so SQS shows it again then.
 */
export const handler = middy<SQSEvent, SQSBatchResponse>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async (event) => {
    const failures: SQSBatchResponse['batchItemFailures'] = [];
    for (const record of event.Records) {
      try {
        const verdict = await deliver(JSON.parse(record.body) as MessageRef, deliveryDeps());
        if (verdict.done) continue;
        await deliveryQueue().showAgainIn(record.receiptHandle, verdict.retryAfterSeconds);
        failures.push({ itemIdentifier: record.messageId });
      } catch (error) {
        // Shown again when its visibility timeout ends: the message is still in its lane.
        logger.error('webhook delivery failed', { error: error instanceof Error ? error.name : 'unknown' });
        failures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures: failures };
  });
