import middy from '@middy/core';
import type { ScheduledEvent } from 'aws-lambda';
import type { ExportResult } from '#shared/domain/account-updater/export.ts';
import { exportAccountUpdates, previousMonth } from '#shared/domain/account-updater/export.ts';
import { injectLambdaContext, logger } from '#shared/log/logger.ts';
import { recordBusinessMetric } from '#shared/observability/metrics.ts';
import { clock } from '#shared/wiring/account-updater.ts';
import { exportDeps } from '#shared/wiring/account-updater-export.ts';

/** The schedule's event, or `{"month": "yyyy-mm"}` when invoked by hand. */
type ExportEvent = Partial<Pick<ScheduledEvent, 'time'>> & { month?: string };

/**
 * Monthly export (EventBridge schedule, day 1): writes each organization's
 * updates of the previous month to `au-reports/org_<id>/<yyyy-mm>.csv`. The
 * month comes from the event's own time, so a retry of the same event
 * exports the same month; failures are thrown for Lambda to retry, then
 * land in the dead-letter queue.
 */
export const handler = middy<ExportEvent, ExportResult>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async (event) => {
    const month = event.month ?? previousMonth(event.time ? new Date(event.time) : clock());
    try {
      const result = await exportAccountUpdates(month, exportDeps());
      logger.info('Account Updater export written', { month, files: result.keys.length });
      return result;
    } catch (error) {
      // Each failed attempt (Lambda retries twice): the export-failure alarm counts them.
      recordBusinessMetric('AccountUpdaterExportFailures', 1, {});
      throw error;
    }
  });
