import middy from '@middy/core';
import { checkUpdateFile } from '#shared/account-updater/csv.ts';
import type { RunInput } from '#shared/account-updater/state-machine.ts';
import { rangesKeyOf } from '#shared/account-updater/state-machine.ts';
import { errorsKeyOf, inboxFile } from '#shared/domain/account-updater/inbox.ts';
import { InvalidRequest } from '#shared/domain/errors.ts';
import { injectLambdaContext, logger } from '#shared/log/logger.ts';
import { checkDeps } from '#shared/wiring/account-updater.ts';

/** The state machine's first step; `organization_id`/`result_key` are given by `au:apply`, derived from the key otherwise. */
interface CheckEvent {
  bucket: string;
  key: string;
  /** S3's sequencer for the write that created the object; absent for au:apply, which is a run of its own. */
  sequencer?: string;
  /** The upload's version; absent for au:apply and the local inbox, which read the version current when the check starts. */
  version_id?: string;
  run_id: string;
  started_at: string;
  organization_id?: string;
  result_key?: string;
}

/**
 * Reads the whole file once, before any batch writes: a file refused as a
 * whole (empty, wrong header, not UTF-8, broken quoting) gets its reason in
 * `au-results/` and the run ends; otherwise the run is fixed here (the file's
 * version, its id, time of application, scope, and its ranges of lines, the
 * map's items) for every batch and the merge.
 */
export const handler = middy<CheckEvent, { run: RunInput } | { refused: string }>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async (event) => {
    const inbox = event.result_key ? { resultKey: event.result_key, ...(event.organization_id ? { organizationId: event.organization_id } : {}) } : inboxFile(event.key);
    if (!inbox) {
      logger.warn('not an Account Updater inbox file; ignored', { key: event.key });
      return { refused: 'NOT_AN_INBOX_FILE' };
    }
    // S3 and EventBridge deliver at least once: a second execution for the same upload ends here, writing nothing.
    const { files, objects } = checkDeps();
    if (event.sequencer !== undefined && !(await files.claimDelivery(event.key, event.sequencer, event.run_id))) {
      logger.info('Account Updater upload already taken by another run; this one ends', { key: event.key });
      return { refused: 'DUPLICATE_DELIVERY' };
    }
    try {
      const versionId = event.version_id ?? (await objects.currentVersion(event.bucket, event.key));
      const { ranges, ...checked } = await checkUpdateFile(objects.source(event.bucket, event.key, versionId));
      // The map's items: byte ranges and line numbers only (a retried check writes the same object again).
      const rangesKey = rangesKeyOf(event.run_id);
      await objects.putJson(event.bucket, rangesKey, ranges);
      const scope = inbox.organizationId ? { organization_id: inbox.organizationId } : {};
      const appliedAt = new Date(event.started_at).toISOString();
      // Recorded only for a file that passed the check: a refused file was never applied.
      const firstAppliedAt = await files.firstApplied(checked.file_id, appliedAt);
      const run: RunInput = { bucket: event.bucket, key: event.key, ranges_key: rangesKey, version_id: versionId, run_id: event.run_id, applied_at: appliedAt, first_applied_at: firstAppliedAt, ...checked, ...scope, result_key: inbox.resultKey, errors_key: errorsKeyOf(inbox.resultKey) };
      return { run };
    } catch (error) {
      if (!(error instanceof InvalidRequest)) throw error;
      await objects.putJson(event.bucket, inbox.resultKey, { error: error.code, message: error.issues[0]?.message ?? error.message });
      logger.info('Account Updater file refused', { key: event.key, refused: error.code });
      return { refused: error.code };
    }
  });
