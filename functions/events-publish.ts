import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { publishChanges } from '#shared/domain/events/publish.ts';
import { recordViews } from '#shared/http/events.ts';
import { injectLambdaContext, logger } from '#shared/log/logger.ts';
import { publishDeps, storedChangeOf } from '#shared/wiring/events.ts';

/**
 * DynamoDB stream of the table (paymethod and document items only, see
 * shared/platform/triggers.ts) -> domain events on the EventBridge bus. Events the bus
 * refused are reported as a partial batch failure from the first of them, so
 * the stream delivers that record and the ones after it again; the event ids
 * stay the same, so consumers deduplicate the repeats (docs/events.md).
 */
export const handler = middy<DynamoDBStreamEvent, DynamoDBBatchResponse>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async (event) => {
    const batch = event.Records.map((record) => ({ position: record.dynamodb?.SequenceNumber ?? '', change: storedChangeOf(record) }));
    const outcome = await publishChanges(batch, { ...publishDeps(), views: recordViews });
    logger.info('stream batch published', { records: batch.length, published: outcome.published, ignored: outcome.ignored, ...(outcome.retryFrom ? { retry_from: outcome.retryFrom } : {}) });
    return { batchItemFailures: outcome.retryFrom ? [{ itemIdentifier: outcome.retryFrom }] : [] };
  });
