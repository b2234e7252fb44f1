/**
 * The Account Updater's state machine (Amazon States Language), built once
 * here for both the CDK stack and the local engine, so both run the same
 * definition: check the file, apply it in batches with a Distributed Map,
 * merge the batch results into the summary. When the map itself fails (more
 * batches failed than it tolerates, or its ItemReader or ResultWriter was
 * refused), the merge still writes the summary, with the map's failure in it,
 * and the execution then fails.
 *
 * Nothing here imports handler or CDK code; the function ARNs and the bucket
 * are parameters.
 */
import { AU_HEADER } from '#shared/domain/account-updater/rows.ts';
import { REPORT_OBJECT_PREFIXES } from '#shared/names.ts';

/** Rows per batch: one chunk invocation applies them in one to two seconds in AWS (8 conditional writes in flight). */
export const BATCH_ROWS = 1_000;
/**
 * A batch's input at most: a file of long rows (up to 8,192 characters each,
 * csv.ts) is cut into more, smaller batches instead of failing them. Step
 * Functions' payload limit is 256 KiB; 8 KiB of it are left for the run
 * (BatchInput) and the envelope, whether or not Step Functions counts them
 * toward MaxInputBytesPerBatch. The local engine cuts by the same two limits,
 * counting the run.
 */
export const MAX_BATCH_INPUT_BYTES = 248 * 1024;
/**
 * Batches in flight in AWS: 6 batches x 8 writes in flight at ~10 ms a
 * conditional write is at most 4,800 rows/s for one organization, which the
 * write shards spread to at most ~700 writes/s per key. A chunk function's
 * CPU (1,024 MB is 0.58 of a vCPU) can hold a batch below its 800 rows/s (at
 * the higher CPU per row the benchmark has measured), so a run goes at that
 * ceiling or slower, never faster (docs/account-updater.md has the arithmetic).
 */
export const MAX_CONCURRENT_BATCHES = 6;
/** Above this share of batches failing after their retries, the map fails; the merge still writes the summary, then the execution fails. */
export const TOLERATED_FAILURE_PERCENTAGE = 5;
/** Batch results and the Map's own result files: one folder per execution. */
export const RUNS_PREFIX = REPORT_OBJECT_PREFIXES.runs;

export const STATE = {
  check: 'CheckFile',
  refused: 'Refused',
  apply: 'ApplyBatches',
  batch: 'ApplyBatch',
  merge: 'MergeResults',
  mergeFailed: 'MergeFailedRun',
  failed: 'RunFailed',
} as const;

export interface DefinitionResources {
  checkFunctionArn: string;
  chunkFunctionArn: string;
  mergeFunctionArn: string;
  reportsBucket: string;
}

/** Lambda's transient errors, retried on every task (the AWS-recommended set). */
const LAMBDA_TRANSIENT = ['Lambda.ServiceException', 'Lambda.AWSLambdaException', 'Lambda.SdkClientException', 'Lambda.TooManyRequestsException'];
/** The merge reads batch results and writes the summary: run again, it writes the same summary. */
const MERGE_RETRY = [{ ErrorEquals: ['States.ALL'], IntervalSeconds: 5, MaxAttempts: 3, BackoffRate: 2 }];

export type StateMachineDefinition = { Comment: string; StartAt: string; States: Record<string, Record<string, unknown>> };

export function accountUpdaterDefinition(resources: DefinitionResources): StateMachineDefinition {
  return {
    Comment: 'Account Updater: check an au-inbox/ file, apply it in parallel batches, write its summary to au-results/ (and fail after it when the map failed)',
    StartAt: STATE.check,
    States: {
      [STATE.check]: {
        Type: 'Task',
        Resource: resources.checkFunctionArn,
        // EventBridge "Object Created" from the reports bucket.
        Parameters: {
          'bucket.$': '$.detail.bucket.name',
          'key.$': '$.detail.object.key',
          // One upload, however many times it is delivered: the check step lets only the first execution through.
          'sequencer.$': '$.detail.object.sequencer',
          // The bucket keeps versions, so every upload has one: the run reads that version, whatever replaces it.
          'version_id.$': "$.detail.object['version-id']",
          'run_id.$': '$$.Execution.Name',
          'started_at.$': '$$.Execution.StartTime',
        },
        Retry: [{ ErrorEquals: LAMBDA_TRANSIENT, IntervalSeconds: 2, MaxAttempts: 3, BackoffRate: 2 }, { ErrorEquals: ['States.ALL'], IntervalSeconds: 5, MaxAttempts: 2, BackoffRate: 2 }],
        Next: 'IsRefused',
      },
      IsRefused: {
        Type: 'Choice',
        Choices: [{ Variable: '$.refused', IsPresent: true, Next: STATE.refused }],
        Default: STATE.apply,
      },
      [STATE.refused]: { Type: 'Succeed', Comment: 'Nothing was applied: the check step wrote the refusal to au-results/, or another execution has this upload' },
      [STATE.apply]: {
        Type: 'Map',
        ItemReader: {
          Resource: 'arn:aws:states:::s3:getObject',
          // The header row is item 0 (line 1): the check step has validated it, the batch skips it.
          ReaderConfig: { InputType: 'CSV', CSVHeaderLocation: 'GIVEN', CSVHeaders: [...AU_HEADER] },
          Parameters: { 'Bucket.$': '$.run.bucket', 'Key.$': '$.run.key', 'VersionId.$': '$.run.version_id' },
        },
        ItemSelector: { 'index.$': '$$.Map.Item.Index', 'row.$': '$$.Map.Item.Value' },
        ItemBatcher: { MaxItemsPerBatch: BATCH_ROWS, MaxInputBytesPerBatch: MAX_BATCH_INPUT_BYTES, BatchInput: { 'run.$': '$.run' } },
        MaxConcurrency: MAX_CONCURRENT_BATCHES,
        ToleratedFailurePercentage: TOLERATED_FAILURE_PERCENTAGE,
        ItemProcessor: {
          ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' },
          StartAt: STATE.batch,
          States: {
            [STATE.batch]: {
              Type: 'Task',
              Resource: resources.chunkFunctionArn,
              // The chunk function's own timeout: a batch that outlives it is retried, not waited for.
              TimeoutSeconds: 300,
              // A batch is idempotent (see apply.ts): each retries alone, the others never start again.
              Retry: [
                { ErrorEquals: LAMBDA_TRANSIENT, IntervalSeconds: 2, MaxAttempts: 4, BackoffRate: 2, JitterStrategy: 'FULL' },
                { ErrorEquals: ['States.ALL'], IntervalSeconds: 3, MaxAttempts: 3, BackoffRate: 2, JitterStrategy: 'FULL' },
              ],
              End: true,
            },
          },
        },
        ResultWriter: { Resource: 'arn:aws:states:::s3:putObject', Parameters: { Bucket: resources.reportsBucket, Prefix: RUNS_PREFIX } },
        ResultPath: null,
        // The map itself failed: too many batches failed after their retries (States.ExceedToleratedFailureThreshold), or
        // the ItemReader or the ResultWriter was refused (States.ItemReaderFailed, States.ResultWriterFailed). Its error
        // output, {Error, Cause}, goes to the merge. (States.Runtime and States.DataLimitExceeded cannot be caught: they
        // fail the execution at once, with no summary.)
        Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: STATE.mergeFailed }],
        Next: STATE.merge,
      },
      [STATE.merge]: {
        Type: 'Task',
        Resource: resources.mergeFunctionArn,
        Parameters: { 'run.$': '$.run' },
        Retry: MERGE_RETRY,
        End: true,
      },
      [STATE.mergeFailed]: {
        Type: 'Task',
        Resource: resources.mergeFunctionArn,
        // The summary records the failure and reports every line no batch completed as not applied.
        Parameters: { 'run.$': '$.run', 'failure.$': '$.failure' },
        // Beside the failure, which the Fail state reads.
        ResultPath: '$.summary',
        Retry: MERGE_RETRY,
        Next: STATE.failed,
      },
      [STATE.failed]: {
        Type: 'Fail',
        Comment: "The map failed: the summary says what was applied; the execution fails with the map's error (ExecutionsFailed, alarmed)",
        ErrorPath: '$.failure.Error',
        CausePath: '$.failure.Cause',
      },
    },
  };
}

/** The run as the check step hands it to every batch and to the merge. */
export interface RunInput {
  bucket: string;
  key: string;
  /** The version of the file the check step read, which every batch reads too. */
  version_id: string;
  run_id: string;
  file_id: string;
  applied_at: string;
  /** When this file was first applied (its first run's applied_at). */
  first_applied_at: string;
  records: number;
  organization_id?: string;
  result_key: string;
  errors_key: string;
}

/** The map's error output, as a Catch gives it: the States language requires `Error` and recommends `Cause`. */
export interface MapFailure {
  Error: string;
  Cause?: string;
}

/** What the merge receives: the run, and the map's failure when it failed (MergeFailedRun). */
export interface MergeEvent {
  run: RunInput;
  failure?: MapFailure;
}

/** One Map item: the row's index in the file (the header is 0) and its cells by header name. */
export interface BatchItem {
  index: number;
  row: Record<string, string>;
}

/** What the chunk function receives from the ItemBatcher. */
export interface BatchEvent {
  Items: BatchItem[];
  BatchInput: { run: RunInput };
}
