import aslValidator from 'asl-validator';
import { describe, expect, it } from 'vitest';
import { accountUpdaterDefinition, BATCH_ROWS, STATE } from '#shared/account-updater/state-machine.ts';
import { AU_HEADER } from '#shared/domain/account-updater/rows.ts';

const arn = (name: string) => `arn:aws:lambda:us-east-1:123456789012:function:${name}`;
const definition = accountUpdaterDefinition({ checkFunctionArn: arn('au-check'), chunkFunctionArn: arn('au-chunk'), mergeFunctionArn: arn('au-merge'), reportsBucket: 'reports' });

describe('Account Updater state machine definition', () => {
  it('is valid Amazon States Language', () => {
    const { isValid, errorsText } = aslValidator(definition);
    expect(isValid, errorsText('\n')).toBe(true);
  }, 120_000); // compiling the validator's JSON schemas takes seconds

  it('is a Distributed Map over the CSV in batches, each retried alone, merged even when the map fails', () => {
    type Retrying = { Retry: unknown[] };
    const map = definition.States[STATE.apply] as {
      ItemProcessor: { ProcessorConfig: unknown; States: Record<string, Retrying> };
      ItemReader: unknown;
      ItemBatcher: { MaxItemsPerBatch: number };
      ToleratedFailurePercentage: number;
      ResultWriter: { Parameters: unknown };
      Catch: unknown;
      Next: string;
    };
    expect(map.ItemProcessor.ProcessorConfig).toEqual({ Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' });
    expect(map.ItemReader).toMatchObject({ Resource: 'arn:aws:states:::s3:getObject', ReaderConfig: { InputType: 'CSV', CSVHeaderLocation: 'GIVEN', CSVHeaders: [...AU_HEADER] } });
    expect(map.ItemBatcher.MaxItemsPerBatch).toBe(BATCH_ROWS);
    expect(map.ItemProcessor.States[STATE.batch]!.Retry.length).toBeGreaterThan(0);
    expect(map.ToleratedFailurePercentage).toBeGreaterThan(0);
    expect(map.ResultWriter.Parameters).toEqual({ Bucket: 'reports', Prefix: 'au-runs/' });
    expect(map.Catch).toEqual([expect.objectContaining({ Next: STATE.merge })]);
    expect(map.Next).toBe(STATE.merge);
  });
});
