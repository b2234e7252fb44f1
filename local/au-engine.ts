import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { Context } from 'aws-lambda';
import { StateMachine } from 'aws-local-stepfunctions';
import type { BatchEvent, MapFailure, MergeEvent, RunInput, StateMachineDefinition } from '#shared/account-updater/state-machine.ts';
import { accountUpdaterDefinition, STATE } from '#shared/account-updater/state-machine.ts';
import { s3 } from '#shared/aws/s3.ts';
import { inboxFile } from '#shared/domain/account-updater/inbox.ts';
import type { RunFailure } from '#shared/domain/account-updater/merge.ts';
import type { AccountUpdaterFunction } from '#shared/platform/function-sizing.ts';
import { ACCOUNT_UPDATER_FUNCTION_SIZING } from '#shared/platform/function-sizing.ts';
import { lambdaContext, LOCAL_ACCOUNT_ID } from './lambda-context.ts';

/**
 * The Account Updater's state machine, run on this machine with the same
 * definition and the same three handlers as in AWS.
 *
 * aws-local-stepfunctions executes each batch's ItemProcessor (the chunk
 * task and its Retry policy) from the real definition, and evaluates the
 * map's ItemReader Parameters and ItemSelector as Step Functions does. It
 * implements no Distributed Map, so the rest of the map is done here: the
 * ItemReader's JSON object (the check step's ranges of the file) is read
 * from S3, each item becomes a child execution's input through the
 * ItemSelector, at most `concurrency` children run at once (MaxConcurrency
 * in AWS), and the ResultWriter's files are written as its WriterConfig
 * says. The check and merge tasks are invoked with the payloads their
 * Parameters build. When the map fails (more batches failed than it
 * tolerates, or its ranges could not be read or its results written), the
 * merge gets the failure, as the definition's MergeFailedRun passes it, and
 * the run is reported as failed, as its RunFailed state ends the execution.
 */
export interface EngineOptions {
  functionsDir: string;
  /** Batches in flight at once (a small pool locally). */
  concurrency?: number;
  /** Pause between a batch's retries, instead of the definition's seconds. */
  retryIntervalMs?: number;
  log?: (line: Record<string, unknown>) => void;
  /** Runs a function's module load and invocations in its own container (the local runtime's); in this process's otherwise. */
  invokeAs?: <R>(functionName: string, invoke: () => Promise<R>) => Promise<R>;
  /**
   * Receives every execution's history as Step Functions keeps it: each
   * state's input and output, each execution's input and output, errors.
   */
  history?: (event: HistoryEvent) => void;
  /** Told the file's row count once the check step has read it, then the rows of each batch as it completes or fails. */
  progress?: (event: EngineProgress) => void;
}

/** What au:apply's progress display is told: the run's size, then each batch's rows as it ends. */
export type EngineProgress = { type: 'started'; rows: number } | { type: 'batch'; rows: number; errors: number };

/** One event of an execution's history (the run's, or a child execution's of the map). */
export interface HistoryEvent {
  /** `run`, or `ApplyBatches/<item index>` for a child execution. */
  execution: string;
  type: string;
  state?: string;
  input?: unknown;
  output?: unknown;
  error?: { Error: string; Cause?: unknown };
}

export interface EngineInput {
  bucket: string;
  key: string;
  /** au:apply names the scope and the summary's key; an inbox file derives both from its key. */
  organization_id?: string;
  result_key?: string;
}

/** A run's outcome; `failure` when the run failed as a whole (its summary is written all the same, and records it). */
export type EngineOutcome = { refused: string } | { run: RunInput; failedBatches: number; failure?: RunFailure };

type Handler<E, R> = (event: E, context: Context) => Promise<R>;
type Json = Parameters<StateMachine['run']>[0];
type MapState = {
  ItemReader: { Parameters: Record<string, unknown> };
  ItemSelector: Record<string, unknown>;
  ToleratedFailurePercentage: number;
  ItemProcessor: StateMachineDefinition & { ProcessorConfig?: unknown };
  ResultWriter: { Parameters: { Bucket: string; Prefix: string }; WriterConfig: { OutputType: string; Transformation: string } };
};
/** Rows of a range of lines, the header (line 1, in the first range) left out. */
const dataRows = (range: { first_line: number; last_line: number }) => Math.max(0, range.last_line - Math.max(range.first_line, 2) + 1);
const contextOf = (name: AccountUpdaterFunction) => lambdaContext(name, ACCOUNT_UPDATER_FUNCTION_SIZING[name]);
const RUN = 'run';

export async function runAccountUpdaterLocally(input: EngineInput, options: EngineOptions): Promise<EngineOutcome> {
  const arn = (name: string) => `arn:aws:lambda:us-east-1:${LOCAL_ACCOUNT_ID}:function:${name}`;
  const definition = accountUpdaterDefinition({ checkFunctionArn: arn('au-check'), chunkFunctionArn: arn('au-chunk'), mergeFunctionArn: arn('au-merge'), reportsBucket: input.bucket });
  const invokeAs = options.invokeAs ?? ((_name, invoke) => invoke());
  const record = options.history ?? (() => {});
  const load = async <E, R>(name: string): Promise<Handler<E, R>> => {
    const { handler } = (await invokeAs(name, () => import(pathToFileURL(path.join(options.functionsDir, `${name}.ts`)).href))) as { handler: Handler<E, R> };
    return (event, context) => invokeAs(name, () => handler(event, context));
  };
  const task = <E, R>(state: string, handler: Handler<E, R>, name: AccountUpdaterFunction) => async (event: E): Promise<R> => {
    record({ execution: RUN, type: 'TaskStateEntered', state, input: event });
    const output = await handler(event, contextOf(name));
    record({ execution: RUN, type: 'TaskStateExited', state, output });
    return output;
  };
  const check = task(STATE.check, await load<Record<string, unknown>, { run: RunInput } | { refused: string }>('au-check'), 'au-check');
  const chunk = await load<BatchEvent, unknown>('au-chunk');
  const merge = await load<MergeEvent, unknown>('au-merge');

  const execution = { run_id: randomUUID(), started_at: new Date().toISOString(), ...input };
  record({ execution: RUN, type: 'ExecutionStarted', input: execution });
  const checked = await check(execution);
  if ('refused' in checked) {
    record({ execution: RUN, type: 'ExecutionSucceeded', output: checked });
    return checked;
  }
  const { run } = checked;
  options.progress?.({ type: 'started', rows: dataRows({ first_line: 1, last_line: run.records }) });
  record({ execution: RUN, type: 'MapStateEntered', state: STATE.apply, input: checked });
  const { failedBatches, failure } = await applyBatches(definition, checked, (event) => chunk(event, contextOf('au-chunk')), options);
  if (failure) {
    record({ execution: RUN, type: 'MapStateFailed', state: STATE.apply, error: failure });
    // MergeFailedRun's payload: the run and the map's error output. Then RunFailed: the execution fails with them.
    await task(STATE.mergeFailed, merge, 'au-merge')({ run, failure });
    record({ execution: RUN, type: 'ExecutionFailed', error: failure });
    return { run, failedBatches, failure: { error: failure.Error, ...(failure.Cause === undefined ? {} : { cause: failure.Cause }) } };
  }
  // ResultPath null: the map's output is its input.
  record({ execution: RUN, type: 'MapStateExited', state: STATE.apply, output: checked });
  const summary = await task(STATE.merge, merge, 'au-merge')({ run });
  record({ execution: RUN, type: 'ExecutionSucceeded', output: summary });
  return { run, failedBatches };
}

/** A state's Parameters (or ItemSelector) evaluated by the library, on `input` with `context` as the context object. */
async function evaluate(parameters: Record<string, unknown>, input: unknown, context: Record<string, unknown> = {}): Promise<unknown> {
  const machine = new StateMachine({ StartAt: 'Evaluate', States: { Evaluate: { Type: 'Pass', Parameters: parameters, End: true } } } as unknown as ConstructorParameters<typeof StateMachine>[0], { validationOptions: { noValidate: true } });
  return machine.run(input as Json, { context: context as NonNullable<Parameters<StateMachine['run']>[1]>['context'] }).result;
}

async function applyBatches(
  definition: StateMachineDefinition,
  mapInput: { run: RunInput },
  chunk: (event: BatchEvent) => Promise<unknown>,
  options: EngineOptions,
): Promise<{ failedBatches: number; failure?: MapFailure }> {
  const map = definition.States[STATE.apply] as unknown as MapState;
  const { ProcessorConfig: _distributed, ...processor } = map.ItemProcessor;
  // Validated once by the unit test (asl-validator); validating on every run would compile its JSON schemas each time (seconds).
  const machine = new StateMachine(processor as unknown as ConstructorParameters<typeof StateMachine>[0], { validationOptions: { noValidate: true } });
  const log = options.log ?? (() => {});
  const record = options.history ?? (() => {});
  const concurrency = Math.max(1, options.concurrency ?? 4);
  const { run } = mapInput;

  // The ItemReader: the JSON array its Parameters name (the check step's ranges).
  let items: unknown[];
  try {
    const { Bucket, Key } = (await evaluate(map.ItemReader.Parameters, mapInput)) as { Bucket: string; Key: string };
    const { Body } = await s3.send(new GetObjectCommand({ Bucket, Key }));
    items = JSON.parse(await Body!.transformToString('utf8')) as unknown[];
  } catch (error) {
    log({ level: 'ERROR', message: 'Account Updater ranges could not be read', run_id: run.run_id, error: String(error) });
    return { failedBatches: 0, failure: { Error: 'States.ItemReaderFailed', Cause: `reading the items of ${run.ranges_key}: ${String(error)}` } };
  }

  const succeeded: unknown[] = [];
  const failed: Array<{ Error: string; Cause?: unknown }> = [];
  const runChild = async (index: number) => {
    const execution = `${STATE.apply}/${index}`;
    const childInput = await evaluate(map.ItemSelector, mapInput, { Map: { Item: { Index: index, Value: items[index] } } });
    const child = machine.run(childInput as Json, {
      overrides: {
        taskResourceLocalHandlers: {
          [STATE.batch]: async (event) => {
            const output = (await chunk(event as unknown as BatchEvent)) as { first_line: number; last_line: number; errors: number };
            // Once per batch: a retried batch reaches here only on the attempt that succeeded.
            options.progress?.({ type: 'batch', rows: dataRows(output), errors: output.errors });
            return output as ReturnType<typeof JSON.parse>;
          },
        },
        retryIntervalOverrides: { [STATE.batch]: options.retryIntervalMs ?? 50 },
      },
    });
    const history = (async () => {
      for await (const event of child.eventLogs) {
        const state = 'state' in event ? { state: event.state.name, ...(event.type === 'StateEntered' ? { input: event.state.input } : {}), ...(event.type === 'StateExited' ? { output: event.state.output } : {}) } : {};
        const data = 'input' in event ? { input: event.input } : 'output' in event ? { output: event.output } : {};
        const error = 'Error' in event ? { error: { Error: event.Error, Cause: event.Cause } } : {};
        record({ execution, type: event.type, ...state, ...data, ...error });
      }
    })();
    try {
      succeeded.push(await child.result);
    } catch (error) {
      const cause = (error as { cause?: { name?: string; message?: string } }).cause;
      failed.push({ Error: cause?.name ?? 'States.TaskFailed', Cause: cause?.message ?? String(error) });
      // Every row of a failed batch is an error of the summary.
      const rows = dataRows(items[index] as { first_line: number; last_line: number });
      options.progress?.({ type: 'batch', rows, errors: rows });
      log({ level: 'ERROR', message: 'Account Updater batch failed after its retries', run_id: run.run_id, item: index, error: String(error) });
    } finally {
      await history;
    }
  };

  // Past the tolerated share of failed children the Map fails (States.ExceedToleratedFailureThreshold); the merge still runs.
  let started = 0;
  const exceeded = () => started > 0 && (failed.length / started) * 100 > map.ToleratedFailurePercentage;
  const inFlight = new Set<Promise<void>>();
  for (let index = 0; index < items.length && !exceeded(); index += 1) {
    started += 1;
    const child: Promise<void> = runChild(index).finally(() => inFlight.delete(child));
    inFlight.add(child);
    while (inFlight.size >= concurrency) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  if (exceeded()) {
    const cause = `${failed.length} of the ${started} batches started failed after their retries: more than the tolerated ${map.ToleratedFailurePercentage}%`;
    return { failedBatches: failed.length, failure: { Error: 'States.ExceedToleratedFailureThreshold', Cause: cause } };
  }
  try {
    await writeResults(map.ResultWriter, succeeded, failed);
  } catch (error) {
    return { failedBatches: failed.length, failure: { Error: 'States.ResultWriterFailed', Cause: String(error) } };
  }
  return { failedBatches: failed.length };
}

/**
 * The ResultWriter's files under `<Prefix><map run id>/`: a manifest and, as
 * the COMPACT transformation exports them, the children's outputs alone (no
 * input), succeeded and failed apart.
 */
async function writeResults(writer: MapState['ResultWriter'], succeeded: unknown[], failed: unknown[]): Promise<void> {
  if (writer.WriterConfig.Transformation !== 'COMPACT' || writer.WriterConfig.OutputType !== 'JSON') throw new Error(`the local engine writes COMPACT JSON results only, not ${JSON.stringify(writer.WriterConfig)}`);
  const { Bucket, Prefix } = writer.Parameters;
  const folder = `${Prefix}${randomUUID()}/`;
  const files = [
    { key: `${folder}SUCCEEDED_0.json`, results: succeeded },
    { key: `${folder}FAILED_0.json`, results: failed },
  ].filter((file) => file.results.length > 0);
  for (const file of files) await s3.send(new PutObjectCommand({ Bucket, Key: file.key, Body: JSON.stringify(file.results), ContentType: 'application/json' }));
  const manifest = { DestinationBucket: Bucket, MapRunArn: `local:${folder}`, ResultFiles: { SUCCEEDED: files.filter((file) => file.results === succeeded).map((file) => ({ Key: file.key })), FAILED: files.filter((file) => file.results === failed).map((file) => ({ Key: file.key })) } };
  await s3.send(new PutObjectCommand({ Bucket, Key: `${folder}manifest.json`, Body: JSON.stringify(manifest), ContentType: 'application/json' }));
}

export interface FileApplication {
  /** The summary as the merge wrote it (au-results/ in AWS, the run's folder for au:apply). */
  summary: Record<string, unknown>;
  /** Where the whole error list was copied when the summary does not list every error. */
  errorsFile?: string;
}

/**
 * au:apply: uploads a local file beside the run's results (never under
 * au-inbox/, so no trigger fires), runs the engine on it and returns the
 * summary, copying the error list next to the file when it is long.
 */
export async function applyLocalFile(filePath: string, scope: { organizationId?: string }, options: EngineOptions & { bucket: string }): Promise<FileApplication> {
  const { createReadStream, createWriteStream } = await import('node:fs');
  const { pipeline } = await import('node:stream/promises');
  const { GetObjectCommand, DeleteObjectCommand } = await import('@aws-sdk/client-s3');
  const { Upload } = await import('@aws-sdk/lib-storage');
  const { RUNS_PREFIX } = await import('#shared/account-updater/state-machine.ts');
  const folder = `${RUNS_PREFIX}cli-${randomUUID()}/`;
  const key = `${folder}${path.basename(filePath)}`;
  await new Upload({ client: s3, params: { Bucket: options.bucket, Key: key, Body: createReadStream(filePath), ContentType: 'text/csv' } }).done();
  try {
    const outcome = await runAccountUpdaterLocally({ bucket: options.bucket, key, result_key: `${folder}summary.json`, ...(scope.organizationId ? { organization_id: scope.organizationId } : {}) }, options);
    const resultKey = 'run' in outcome ? outcome.run.result_key : `${folder}summary.json`;
    const { Body } = await s3.send(new GetObjectCommand({ Bucket: options.bucket, Key: resultKey }));
    const summary = JSON.parse(await Body!.transformToString('utf8')) as Record<string, unknown>;
    if (typeof summary.errors_key !== 'string') return { summary };
    const errorsFile = `${filePath}.errors.csv`;
    const errors = await s3.send(new GetObjectCommand({ Bucket: options.bucket, Key: summary.errors_key }));
    await pipeline(errors.Body as NodeJS.ReadableStream, createWriteStream(errorsFile));
    return { summary, errorsFile };
  } finally {
    // The copy holds card numbers in clear: it goes as soon as the run is over (the lifecycle rule is the backstop).
    await s3.send(new DeleteObjectCommand({ Bucket: options.bucket, Key: key }));
  }
}

interface InboxEventSource {
  on(event: 'event', listener: (event: { Records?: Array<{ eventName: string; s3: { bucket: { name: string }; object: { key: string } } }> }) => void): unknown;
  off(event: 'event', listener: (...args: never[]) => void): unknown;
}

/**
 * The local stand-in for the stack's EventBridge rule: a CSV created under
 * `au-inbox/` in the reports bucket starts a run of the engine, as it starts
 * an execution of the state machine in AWS.
 */
export function routeInboxToEngine(server: InboxEventSource, bucket: string, options: EngineOptions): { close(): Promise<void> } {
  const runs = new Set<Promise<void>>();
  const log = options.log ?? (() => {});
  const listener = (event: Parameters<Parameters<InboxEventSource['on']>[1]>[0]) => {
    for (const record of event.Records ?? []) {
      const key = record.s3.object.key;
      if (record.s3.bucket.name !== bucket || !record.eventName.startsWith('ObjectCreated:') || !inboxFile(key)) continue;
      const run: Promise<void> = runAccountUpdaterLocally({ bucket, key }, options)
        .then((outcome) => {
          if ('refused' in outcome) log({ level: 'INFO', message: 'Account Updater inbox file processed', key, refused: outcome.refused });
          else if (outcome.failure) log({ level: 'ERROR', message: 'Account Updater run failed; its summary says what was applied', key, result_key: outcome.run.result_key, failure: outcome.failure });
          else log({ level: 'INFO', message: 'Account Updater inbox file processed', key, result_key: outcome.run.result_key });
        })
        .catch((error: unknown) => log({ level: 'ERROR', message: 'Account Updater run failed', key, error: String(error) }))
        .finally(() => runs.delete(run));
      runs.add(run);
    }
  };
  server.on('event', listener);
  return {
    close: async () => {
      server.off('event', listener);
      await Promise.allSettled([...runs]);
    },
  };
}
