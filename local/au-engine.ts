import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { StateMachine } from 'aws-local-stepfunctions';
import { batchItem } from '#shared/account-updater/batch-items.ts';
import { readUpdateFile } from '#shared/account-updater/csv.ts';
import type { BatchEvent, BatchItem, MapFailure, MergeEvent, RunInput, StateMachineDefinition } from '#shared/account-updater/state-machine.ts';
import { accountUpdaterDefinition, STATE } from '#shared/account-updater/state-machine.ts';
import { s3RangedObjectSource } from '#shared/aws/reports.ts';
import { s3 } from '#shared/aws/s3.ts';
import { inboxFile } from '#shared/domain/account-updater/inbox.ts';
import type { RunFailure } from '#shared/domain/account-updater/merge.ts';
import type { AccountUpdaterFunction } from '#shared/function-sizing.ts';
import { ACCOUNT_UPDATER_FUNCTION_SIZING } from '#shared/function-sizing.ts';
import { lambdaContext, LOCAL_ACCOUNT_ID } from './lambda-context.ts';

/**
 * The Account Updater's state machine, run on this machine with the same
 * definition and the same three handlers as in AWS.
 *
 * aws-local-stepfunctions executes each batch's ItemProcessor (the chunk
 * task and its Retry policy) from the real definition. It does not implement
 * a Distributed Map's ItemReader, ItemBatcher or ResultWriter, so those are
 * done here: the file is read from S3 (in ranges) with the same CSV reading the check
 * step uses, cut into batches of the definition's MaxItemsPerBatch, with the
 * items shaped as the Step Functions CSV reader shapes them, and at most
 * `concurrency` batches run at once (MaxConcurrency in AWS). The check and
 * merge tasks are invoked with the payloads their Parameters build. When the
 * map fails (more batches failed than it tolerates, or the file could not be
 * read), the merge gets the failure, as the definition's MergeFailedRun
 * passes it, and the run is reported as failed, as its RunFailed state ends
 * the execution.
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
const contextOf = (name: AccountUpdaterFunction) => lambdaContext(name, ACCOUNT_UPDATER_FUNCTION_SIZING[name]);

export async function runAccountUpdaterLocally(input: EngineInput, options: EngineOptions): Promise<EngineOutcome> {
  const arn = (name: string) => `arn:aws:lambda:us-east-1:${LOCAL_ACCOUNT_ID}:function:${name}`;
  const definition = accountUpdaterDefinition({ checkFunctionArn: arn('au-check'), chunkFunctionArn: arn('au-chunk'), mergeFunctionArn: arn('au-merge'), reportsBucket: input.bucket });
  const invokeAs = options.invokeAs ?? ((_name, invoke) => invoke());
  const load = async <E, R>(name: string): Promise<Handler<E, R>> => {
    const { handler } = (await invokeAs(name, () => import(pathToFileURL(path.join(options.functionsDir, `${name}.ts`)).href))) as { handler: Handler<E, R> };
    return (event, context) => invokeAs(name, () => handler(event, context));
  };
  const check = await load<Record<string, unknown>, { run: RunInput } | { refused: string }>('au-check');
  const chunk = await load<BatchEvent, unknown>('au-chunk');
  const merge = await load<MergeEvent, unknown>('au-merge');

  const checked = await check({ run_id: randomUUID(), started_at: new Date().toISOString(), ...input }, contextOf('au-check'));
  if ('refused' in checked) return checked;
  const { run } = checked;
  const { failedBatches, failure } = await applyBatches(definition, run, (event) => chunk(event, contextOf('au-chunk')), options);
  // MergeResults' payload, or after a failed map MergeFailedRun's: the run and the map's error output.
  await merge(failure ? { run, failure } : { run }, contextOf('au-merge'));
  if (!failure) return { run, failedBatches };
  // RunFailed: the execution fails with the map's error and cause.
  return { run, failedBatches, failure: { error: failure.Error, ...(failure.Cause === undefined ? {} : { cause: failure.Cause }) } };
}

async function applyBatches(
  definition: StateMachineDefinition,
  run: RunInput,
  chunk: (event: BatchEvent) => Promise<unknown>,
  options: EngineOptions,
): Promise<{ failedBatches: number; failure?: MapFailure }> {
  const map = definition.States[STATE.apply] as { ItemBatcher: { MaxItemsPerBatch: number; MaxInputBytesPerBatch: number }; ToleratedFailurePercentage: number; ItemProcessor: StateMachineDefinition & { ProcessorConfig?: unknown } };
  const { ProcessorConfig: _distributed, ...processor } = map.ItemProcessor;
  // Validated once by the unit test (asl-validator); validating on every run would compile its JSON schemas each time (seconds).
  const machine = new StateMachine(processor as unknown as ConstructorParameters<typeof StateMachine>[0], { validationOptions: { noValidate: true } });
  const log = options.log ?? (() => {});
  const concurrency = Math.max(1, options.concurrency ?? 4);
  const runBatch = async (items: BatchItem[]) => {
    const execution = machine.run(
      { Items: items, BatchInput: { run } } as unknown as Parameters<typeof machine.run>[0],
      {
        overrides: {
          taskResourceLocalHandlers: { [STATE.batch]: async (event) => (await chunk(event as unknown as BatchEvent)) as ReturnType<typeof JSON.parse> },
          retryIntervalOverrides: { [STATE.batch]: options.retryIntervalMs ?? 50 },
        },
      },
    );
    await execution.result;
  };

  const inFlight = new Set<Promise<void>>();
  let batches = 0;
  let failed = 0;
  const launch = (items: BatchItem[]) => {
    batches += 1;
    const task: Promise<void> = runBatch(items)
      .catch((error: unknown) => {
        failed += 1;
        log({ level: 'ERROR', message: 'Account Updater batch failed after its retries', run_id: run.run_id, first_line: items[0]!.index + 1, error: String(error) });
      })
      .finally(() => inFlight.delete(task));
    inFlight.add(task);
  };
  // Past the tolerated share of failed batches the Map fails (States.ExceedToleratedFailureThreshold); the merge still runs.
  const exceeded = () => batches > 0 && (failed / batches) * 100 > map.ToleratedFailurePercentage;
  let unreadable: unknown;
  let items: BatchItem[] = [];
  // A batch's input as JSON, `{"Items":[...],"BatchInput":{"run":...}}`: the run, the brackets, and each item and its comma.
  const emptyBatchBytes = Buffer.byteLength(JSON.stringify({ Items: [], BatchInput: { run } }));
  let bytes = emptyBatchBytes;
  try {
    // Ranged reads: the loop below pauses while its batches run, longer than a streaming GET may stay silent.
    for await (const row of readUpdateFile(s3RangedObjectSource(s3, run.bucket, run.key, run.version_id)())) {
      const item = batchItem(row);
      const itemBytes = Buffer.byteLength(JSON.stringify(item)) + 1;
      // A batch ends at MaxItemsPerBatch items, or before the item that would take it past MaxInputBytesPerBatch.
      const full = items.length >= map.ItemBatcher.MaxItemsPerBatch || (items.length > 0 && bytes + itemBytes > map.ItemBatcher.MaxInputBytesPerBatch);
      if (!full) {
        items.push(item);
        bytes += itemBytes;
        continue;
      }
      launch(items);
      items = [item];
      bytes = emptyBatchBytes + itemBytes;
      // The reader waits for a free slot: memory holds `concurrency` batches, whatever the file's size.
      while (inFlight.size >= concurrency) await Promise.race(inFlight);
      if (exceeded()) break;
    }
    if (items.length > 0 && !exceeded()) launch(items);
  } catch (error) {
    // The ItemReader's failure in AWS (States.ItemReaderFailed): the map fails once its batches in flight have ended.
    unreadable = error;
    log({ level: 'ERROR', message: 'Account Updater file could not be read to the end', run_id: run.run_id, error: String(error) });
  }
  await Promise.all(inFlight);
  if (unreadable !== undefined) return { failedBatches: failed, failure: { Error: 'States.ItemReaderFailed', Cause: `reading ${run.key}: ${String(unreadable)}` } };
  if (exceeded()) {
    const cause = `${failed} of the ${batches} batches started failed after their retries: more than the tolerated ${map.ToleratedFailurePercentage}%`;
    return { failedBatches: failed, failure: { Error: 'States.ExceedToleratedFailureThreshold', Cause: cause } };
  }
  return { failedBatches: failed };
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
