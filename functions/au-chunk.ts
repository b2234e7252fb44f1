import middy from '@middy/core';
import { readUpdateRange } from '#shared/account-updater/csv.ts';
import type { BatchEvent } from '#shared/account-updater/state-machine.ts';
import { applyBatch } from '#shared/domain/account-updater/apply.ts';
import type { SourceRow } from '#shared/domain/account-updater/rows.ts';
import { injectLambdaContext, logger } from '#shared/log/logger.ts';
import { batchDeps } from '#shared/wiring/account-updater.ts';

/**
 * One batch of the Distributed Map: reads its range of the file (up to 1,000
 * lines) from S3, in the version the check step read, applies the rows,
 * stores the batch's result for the merge, and returns its counts. Its input
 * and output hold byte offsets, line numbers and counts: no cell of the file.
 * Any failure is thrown, so Step Functions retries this batch alone;
 * re-running a batch changes nothing it already did.
 */
export const handler = middy<BatchEvent, { first_line: number; last_line: number; applied: number; skipped: number; errors: number }>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async ({ range, run }) => {
    const deps = batchDeps();
    const rows: SourceRow[] = [];
    for await (const row of readUpdateRange(deps.objects.byteRange(run.bucket, run.key, run.version_id, range), range)) rows.push(row);
    const result = await applyBatch(rows, run, deps);
    await deps.results.put(run.run_id, result);
    return { first_line: result.first_line, last_line: result.last_line, applied: result.applied, skipped: result.skipped, errors: result.errors.length };
  });
