/**
 * The Account Updater's state machine (Amazon States Language), built once
 * here for both the CDK stack and the local engine, so both run the same
 * definition: check the file and cut it into ranges of lines, apply the
 * ranges in batches with a Distributed Map (each batch reads its own lines
 * from S3: no cell of the file is ever in the state machine's data), merge
 * the batch results into the summary. When the map itself fails (more
 * batches failed than it tolerates, or its ItemReader or ResultWriter was
 * refused), the merge still writes the summary, with the map's failure in it,
 * and the execution then fails.
 *
 * Nothing here imports handler or CDK code; the function ARNs and the bucket
 * are parameters.
 */
import { REPORT_OBJECT_PREFIXES } from '#shared/platform/names.ts';

/** Rows per batch (a range of the file): one chunk invocation applies them in one to two seconds in AWS (8 conditional writes in flight). */
export const BATCH_ROWS = 1_000;
/**
 * A batch's bytes of the file at most: a file of long rows (up to 8,192
 * characters each, csv.ts) is cut into more, smaller batches, so the rows a
 * chunk holds stay around a megabyte whatever the file.
 */
export const MAX_BATCH_BYTES = 1024 * 1024;
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

/** How the Map writes its result files. */
export const RESULT_WRITER_CONFIG = { OutputType: 'JSON', Transformation: 'COMPACT' } as const;

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
        // The items are the check step's ranges of the file (au-runs/<run>/ranges.json), never its rows: each batch reads
        // its rows from S3 itself, so no cell of the file, card numbers included, is in any execution's input, output,
        // history or result file.
        ItemReader: {
          Resource: 'arn:aws:states:::s3:getObject',
          ReaderConfig: { InputType: 'JSON' },
          Parameters: { 'Bucket.$': '$.run.bucket', 'Key.$': '$.run.ranges_key' },
        },
        ItemSelector: { 'range.$': '$$.Map.Item.Value', 'run.$': '$.run' },
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
        // COMPACT: the result files hold each batch's output (its counts), not its input (NONE, the default, keeps both).
        ResultWriter: { Resource: 'arn:aws:states:::s3:putObject', Parameters: { Bucket: resources.reportsBucket, Prefix: RUNS_PREFIX }, WriterConfig: RESULT_WRITER_CONFIG },
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
  /** The file's ranges (a JSON array of LineRange) in the same bucket: the map's items. */
  ranges_key: string;
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

/**
 * Lines `first_line` to `last_line` of the file: the bytes from `start` up to
 * `end` (exclusive), which begin and end on record boundaries. The check step
 * cuts the file into such ranges (csv.ts); a batch reads its own from S3, so the map
 * that hands the ranges out never carries a cell of the file.
 */
export interface LineRange {
  start: number;
  end: number;
  first_line: number;
  last_line: number;
}

/** What the chunk function receives: one range of the file (a Map item, as the ItemReader reads it) and the run. */
export interface BatchEvent {
  range: LineRange;
  run: RunInput;
}

/** Where the check step writes a run's ranges. */
export function rangesKeyOf(runId: string): string {
  return `${RUNS_PREFIX}${runId}/ranges.json`;
}
