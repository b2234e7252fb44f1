import middy from '@middy/core';
import type { S3Event } from 'aws-lambda';
import { putJson, s3ObjectSource } from '#shared/aws/reports.ts';
import { s3 } from '#shared/aws/s3.ts';
import { applyAccountUpdates } from '#shared/domain/account-updater/apply.ts';
import { decodeS3Key, inboxFile } from '#shared/domain/account-updater/inbox.ts';
import { InvalidRequest } from '#shared/domain/errors.ts';
import { injectLambdaContext, logger } from '#shared/log/logger.ts';
import { applyDeps } from '#shared/wiring/account-updater.ts';

/**
 * S3 ObjectCreated on `au-inbox/**.csv` in the reports bucket: applies the
 * file and writes its summary under `au-results/`. A file refused as a whole
 * (empty, wrong header, not UTF-8) gets its reason there instead; any other
 * failure is thrown, so Lambda retries (re-applying is harmless) and then
 * sends the event to the dead-letter queue.
 */
export const handler = middy<S3Event, void>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async (event) => {
    for (const record of event.Records) {
      const bucket = record.s3.bucket.name;
      const key = decodeS3Key(record.s3.object.key);
      const inbox = inboxFile(key);
      if (!inbox) {
        logger.warn('not an Account Updater inbox file; ignored', { key });
        continue;
      }
      const outcome = await applyAccountUpdates(s3ObjectSource(s3, bucket, key), inbox, applyDeps()).catch((error: unknown) => {
        if (error instanceof InvalidRequest) return { error: error.code, message: error.message };
        throw error;
      });
      await putJson(s3, bucket, inbox.resultKey, outcome);
      logger.info('Account Updater file processed', { key, result_key: inbox.resultKey, ...('applied' in outcome ? { applied: outcome.applied, skipped: outcome.skipped, errors: outcome.errors.length } : { refused: outcome.error }) });
    }
  });
