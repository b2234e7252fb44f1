import middy from '@middy/core';
import type { MergeEvent } from '#shared/account-updater/state-machine.ts';
import { mergeRun } from '#shared/domain/account-updater/merge.ts';
import { injectLambdaContext, logger } from '#shared/log/logger.ts';
import { mergeDeps } from '#shared/wiring/account-updater.ts';

/**
 * The state machine's last step: merges the batch results into the summary
 * (`au-results/<path>.json`, with the whole error list beside it when it is
 * longer than the summary shows). Runs after a map that failed too (with its
 * failure, which the summary records): lines of batches that never succeeded
 * are reported as not applied, and the execution fails after this step.
 */
export const handler = middy<MergeEvent, { result_key: string; applied: number; skipped: number; error_count: number }>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async ({ run, failure: mapFailure }) => {
    const failure = mapFailure && { error: mapFailure.Error, ...(typeof mapFailure.Cause === 'string' ? { cause: mapFailure.Cause } : {}) };
    const deps = mergeDeps();
    const summary = await mergeRun({ run_id: run.run_id, records: run.records, errors_key: run.errors_key, ...(failure ? { failure } : {}) }, deps);
    await deps.objects.putJson(run.bucket, run.result_key, summary);
    const logged = { key: run.key, result_key: run.result_key, applied: summary.applied, skipped: summary.skipped, errors: summary.error_count };
    if (failure) logger.error('Account Updater run failed; its summary says what was applied', { ...logged, failure });
    else logger.info('Account Updater file processed', logged);
    // The state's output stays small (Step Functions caps it at 256 KB): the summary itself is in S3.
    return { result_key: run.result_key, applied: summary.applied, skipped: summary.skipped, error_count: summary.error_count };
  });
