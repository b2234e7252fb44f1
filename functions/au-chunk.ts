import middy from '@middy/core';
import { sourceRows } from '#shared/account-updater/batch-items.ts';
import type { BatchEvent } from '#shared/account-updater/state-machine.ts';
import { applyBatch } from '#shared/domain/account-updater/apply.ts';
import { injectLambdaContext, logger } from '#shared/log/logger.ts';
import { batchDeps } from '#shared/wiring/account-updater.ts';

/**
 * One batch of the Distributed Map (up to 1,000 rows): applies them, stores
 * the batch's result for the merge, and returns its counts. Any failure is
 * thrown, so Step Functions retries this batch alone; re-running a batch
 * changes nothing it already did.
 */
export const handler = middy<BatchEvent, { first_line: number; last_line: number; applied: number; skipped: number; errors: number }>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async (event) => {
    const { run } = event.BatchInput;
    const deps = batchDeps();
    const result = await applyBatch(sourceRows(event.Items), run, deps);
    await deps.results.put(run.run_id, result);
    return { first_line: result.first_line, last_line: result.last_line, applied: result.applied, skipped: result.skipped, errors: result.errors.length };
  });
