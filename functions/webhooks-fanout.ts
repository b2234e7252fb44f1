import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { BusEvent } from '#shared/domain/webhooks/delivery.ts';
import { fanOut } from '#shared/domain/webhooks/delivery.ts';
import { injectLambdaContext, logger } from '#shared/log/logger.ts';
import { fanOutDeps } from '#shared/wiring/webhook-delivery.ts';

/**
 * Intake queue (the webhook rule's events) -> one lane entry per matching
 * endpoint -> the delivery queue. Events that failed are reported as batch
 * item failures and received again; the entries they did write are found
 * again and not repeated.
 */
export const handler = middy<SQSEvent, SQSBatchResponse>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async (event) => {
    const batch = event.Records.map((record) => ({ id: record.messageId, event: JSON.parse(record.body) as BusEvent }));
    const failed = await fanOut(batch, fanOutDeps());
    if (failed.length > 0) logger.warn('webhook fan-out failed for some events', { failed: failed.length, events: batch.length });
    return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
  });
