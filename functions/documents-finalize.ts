import middy from '@middy/core';
import type { S3Event } from 'aws-lambda';
import { documentDeps } from '#shared/wiring/documents.ts';
import { finalizeUpload } from '#shared/domain/documents/upload-session.ts';
import { injectLambdaContext, logger } from '#shared/log/logger.ts';
import { recordBusinessMetric } from '#shared/observability/metrics.ts';

/**
 * S3 ObjectCreated under uploads/ (see shared/platform/triggers.ts): checks the posted
 * file and marks its document available or rejected. Each record is handled
 * on its own; if any failed the invocation fails, and the asynchronous retry
 * redoes all of them, which is safe because finalizing is idempotent.
 */
export const handler = middy<S3Event, void>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async (event) => {
    const failures: unknown[] = [];
    for (const record of event.Records) {
      // Keys arrive URL-encoded, spaces as '+'.
      const key = decodeURIComponent(record.s3.object.key.replace(/\+/g, ' '));
      try {
        const outcome = await finalizeUpload(key, documentDeps());
        logger.info('upload finalized', { key, outcome, event_name: record.eventName });
        if (outcome.status === 'available') recordBusinessMetric('DocumentsStored', 1, { document_type: outcome.type });
        if (outcome.status === 'rejected') recordBusinessMetric('DocumentsRejected', 1, { reason: 'failed_checks' });
      } catch (error) {
        logger.error('upload not finalized', { key, error });
        failures.push(error);
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, `${failures.length} of ${event.Records.length} uploads not finalized`);
  });
