import aslValidator from 'asl-validator';
import { StateMachine } from 'aws-local-stepfunctions';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { accountUpdaterDefinition, BATCH_ROWS, MAX_BATCH_BYTES, STATE } from '#shared/account-updater/state-machine.ts';

const arn = (name: string) => `arn:aws:lambda:us-east-1:123456789012:function:${name}`;
const definition = accountUpdaterDefinition({ checkFunctionArn: arn('au-check'), chunkFunctionArn: arn('au-chunk'), mergeFunctionArn: arn('au-merge'), reportsBucket: 'reports' });

describe('Account Updater state machine definition', () => {
  it('is valid Amazon States Language', () => {
    const { isValid, errorsText } = aslValidator(definition);
    expect(isValid, errorsText('\n')).toBe(true);
  }, 120_000); // compiling the validator's JSON schemas takes seconds

  it("is a Distributed Map over the check step's ranges of the file, each batch retried alone, merged even when the map fails", () => {
    type Retrying = { Retry: unknown[] };
    const map = definition.States[STATE.apply] as {
      ItemProcessor: { ProcessorConfig: unknown; States: Record<string, Retrying> };
      ItemReader: unknown;
      ItemSelector: unknown;
      ItemBatcher?: unknown;
      ToleratedFailurePercentage: number;
      ResultWriter: { Parameters: unknown; WriterConfig: unknown };
      Catch: unknown;
      Next: string;
    };
    expect(map.ItemProcessor.ProcessorConfig).toEqual({ Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' });
    // Items are ranges of lines from a JSON object under au-runs/, one range a batch: never the CSV's rows.
    expect(map.ItemReader).toEqual({ Resource: 'arn:aws:states:::s3:getObject', ReaderConfig: { InputType: 'JSON' }, Parameters: { 'Bucket.$': '$.run.bucket', 'Key.$': '$.run.ranges_key' } });
    expect(JSON.stringify(definition)).not.toMatch(/CSV|account_number/);
    expect(map.ItemSelector).toEqual({ 'range.$': '$$.Map.Item.Value', 'run.$': '$.run' });
    expect(map.ItemBatcher).toBeUndefined();
    // The figures docs/account-updater.md gives for a range.
    const docs = readFileSync(new URL('../../docs/account-updater.md', import.meta.url), 'utf8');
    expect(docs).toContain(`one item a range of at most ${BATCH_ROWS.toLocaleString('en-US')} lines or ${MAX_BATCH_BYTES / 1024 / 1024} MiB`);
    expect(map.ItemProcessor.States[STATE.batch]!.Retry.length).toBeGreaterThan(0);
    expect(map.ToleratedFailurePercentage).toBeGreaterThan(0);
    // The result files hold each batch's output alone: COMPACT drops the inputs that NONE, the default, exports.
    expect(map.ResultWriter.Parameters).toEqual({ Bucket: 'reports', Prefix: 'au-runs/' });
    expect(map.ResultWriter.WriterConfig).toEqual({ OutputType: 'JSON', Transformation: 'COMPACT' });
    expect(map.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: STATE.mergeFailed }]);
    expect(map.Next).toBe(STATE.merge);
    expect(definition.States[STATE.mergeFailed]).toMatchObject({ Type: 'Task', Resource: arn('au-merge'), Next: STATE.failed });
    expect(definition.States[STATE.failed]).toMatchObject({ Type: 'Fail' });
  });

  it("merges the run alone when the map succeeds; after a failed map, hands the merge the map's failure, then fails with it", async () => {
    // The states from the map on, the map being a Task with its own Catch, ResultPath and Next: the library runs no
    // Distributed Map, and what is tested here is where its success and its failure lead.
    const { Catch, Next, ResultPath } = definition.States[STATE.apply] as Record<string, unknown>;
    const rest = Object.entries(definition.States).filter(([name]) => ![STATE.check, 'IsRefused', STATE.refused, STATE.apply].includes(name));
    const machine = new StateMachine(
      { StartAt: STATE.apply, States: { [STATE.apply]: { Type: 'Task', Resource: arn('map'), Catch, ResultPath, Next }, ...Object.fromEntries(rest) } } as unknown as ConstructorParameters<typeof StateMachine>[0],
      { validationOptions: { noValidate: true } },
    );
    const run = { bucket: 'reports', key: 'au-inbox/org_1/may.csv', run_id: 'run-1', records: 2_301, result_key: 'au-results/org_1/may.csv.json' };
    const merged = { result_key: run.result_key, applied: 999, skipped: 0, error_count: 1_302 };
    const execute = (map: () => Promise<unknown>) => {
      const payloads: unknown[] = [];
      const merge = async (payload: unknown) => (payloads.push(payload), merged) as ReturnType<typeof JSON.parse>;
      const execution = machine.run({ run } as unknown as Parameters<typeof machine.run>[0], {
        overrides: {
          taskResourceLocalHandlers: { [STATE.apply]: map as never, [STATE.merge]: merge, [STATE.mergeFailed]: merge },
          retryIntervalOverrides: { [STATE.merge]: 0, [STATE.mergeFailed]: 0 },
        },
      });
      return { result: execution.result, payloads };
    };

    const succeeded = execute(async () => ({ MapRunArn: 'arn:aws:states:us-east-1:123456789012:mapRun:apply/ApplyBatches:run-1', ResultWriterDetails: { Bucket: 'reports', Key: 'au-runs/x/manifest.json' } }));
    expect(await succeeded.result).toEqual(merged);
    expect(succeeded.payloads).toEqual([{ run }]);

    for (const [error, cause] of [
      ['States.ExceedToleratedFailureThreshold', 'The specified tolerated failure threshold was exceeded'],
      ['States.ItemReaderFailed', 'Access Denied (Service: S3, Status Code: 403)'],
      ['States.ResultWriterFailed', 'Access Denied (Service: S3, Status Code: 403)'],
    ] as const) {
      const failed = execute(async () => {
        throw Object.assign(new Error(cause), { name: error });
      });
      // The library rejects with its ExecutionError, whose cause is the error the execution failed with.
      await expect(failed.result, error).rejects.toMatchObject({ cause: { name: error, message: cause } });
      expect(failed.payloads, error).toEqual([{ run, failure: { Error: error, Cause: cause } }]);
    }
  });

  it('hands the check step the upload as EventBridge describes it, S3 sequencer and version included, and ends when it refuses', async () => {
    // An "Object Created" event as S3 sends it to EventBridge (trimmed to what the definition reads).
    const event = {
      id: '17793124-05d4-b198-2fde-7ededc63b103',
      'detail-type': 'Object Created',
      source: 'aws.s3',
      detail: { bucket: { name: 'reports' }, object: { key: 'au-inbox/org_1/may.csv', size: 120, etag: 'b1946ac92492d2347c6235b4d2611184', sequencer: '00617F08299329D189', 'version-id': 'IYV3p45BT0ac8hjHg1houSdS1a.Mro8e' } },
    };
    const { Next: _apply, ...check } = definition.States[STATE.check] as Record<string, unknown>;
    const refused = definition.States.IsRefused!;
    const machine = new StateMachine(
      { StartAt: STATE.check, States: { [STATE.check]: { ...check, Next: 'IsRefused' }, IsRefused: { ...refused, Default: 'Applied' }, [STATE.refused]: definition.States[STATE.refused]!, Applied: { Type: 'Pass', Result: 'applied', End: true } } } as unknown as ConstructorParameters<typeof StateMachine>[0],
      { validationOptions: { noValidate: true } },
    );
    const received: unknown[] = [];
    const run = (answer: unknown) =>
      machine.run(event as unknown as Parameters<typeof machine.run>[0], {
        // What Step Functions puts in the context object of an execution.
        context: { Execution: { Id: 'arn:aws:states:us-east-1:123456789012:execution:apply:run-1', Name: 'run-1', StartTime: '2026-05-15T12:00:00.000Z' } } as unknown as NonNullable<Parameters<typeof machine.run>[1]>['context'],
        overrides: { taskResourceLocalHandlers: { [STATE.check]: async (payload) => (received.push(payload), answer) as ReturnType<typeof JSON.parse> } },
      }).result;
    expect(await run({ refused: 'DUPLICATE_DELIVERY' })).toEqual({ refused: 'DUPLICATE_DELIVERY' });
    expect(received[0]).toMatchObject({ bucket: 'reports', key: 'au-inbox/org_1/may.csv', sequencer: '00617F08299329D189', version_id: 'IYV3p45BT0ac8hjHg1houSdS1a.Mro8e' });
    // The library stamps StartTime itself; the name is the one given.
    expect(received[0]).toMatchObject({ run_id: 'run-1', started_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) });
    expect(await run({ run: {} })).toBe('applied');
  });

  it("reads the run's ranges, and hands each batch one range and the run, the file's version included", async () => {
    // The ItemReader's Parameters and the ItemSelector, evaluated as Step Functions evaluates them, on the check step's output.
    const map = definition.States[STATE.apply] as { ItemReader: { Parameters: Record<string, string> }; ItemSelector: Record<string, string> };
    const evaluate = (parameters: Record<string, string>, input: unknown, context = {}) =>
      new StateMachine({ StartAt: 'Evaluate', States: { Evaluate: { Type: 'Pass', Parameters: parameters, End: true } } } as unknown as ConstructorParameters<typeof StateMachine>[0], { validationOptions: { noValidate: true } })
        .run(input as Parameters<StateMachine['run']>[0], { context: context as never }).result;
    const run = { bucket: 'reports', key: 'au-inbox/org_1/may.csv', ranges_key: 'au-runs/run-1/ranges.json', version_id: 'IYV3p45BT0ac8hjHg1houSdS1a.Mro8e', run_id: 'run-1' };
    expect(await evaluate(map.ItemReader.Parameters, { run })).toEqual({ Bucket: 'reports', Key: 'au-runs/run-1/ranges.json' });
    const range = { start: 1_234, end: 56_789, first_line: 1_001, last_line: 2_000 };
    expect(await evaluate(map.ItemSelector, { run }, { Map: { Item: { Index: 1, Value: range } } })).toEqual({ range, run });
  });
});
