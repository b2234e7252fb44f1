import { setImmediate } from 'node:timers/promises';
import { BatchGetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { FailureSubject } from '#shared/domain/authentication.ts';
import { DynamoAuthFailureCounter } from '#shared/store/credentials.ts';

/** UpdateItem ADD and BatchGetItem as DynamoDB applies them, one call at a time, each taking a turn of the event loop. */
function fakeTable() {
  const items = new Map<string, Record<string, unknown>>();
  const calls = { updates: 0, batchGets: 0 };
  const client = {
    send: async (command: unknown) => {
      await setImmediate();
      if (command instanceof UpdateCommand) {
        calls.updates += 1;
        const { Key, ExpressionAttributeNames, ExpressionAttributeValues, ReturnValues } = command.input;
        expect(ReturnValues).toBe('ALL_NEW');
        const item = items.get(Key!.pk as string) ?? { ...Key };
        const attribute = ExpressionAttributeNames!['#second'] as string;
        item[attribute] = ((item[attribute] as number | undefined) ?? 0) + (ExpressionAttributeValues![':failures'] as number);
        items.set(Key!.pk as string, item);
        return { Attributes: { ...item } };
      }
      if (command instanceof BatchGetCommand) {
        calls.batchGets += 1;
        const [table, { Keys }] = Object.entries(command.input.RequestItems!)[0] as [string, { Keys: Array<Record<string, unknown>> }];
        return { Responses: { [table]: Keys.flatMap((key) => (items.has(key.pk as string) ? [{ ...items.get(key.pk as string) }] : [])) } };
      }
      throw new Error('unexpected command');
    },
  };
  return { client: client as unknown as DynamoDBDocumentClient, calls };
}

const address: FailureSubject = { kind: 'address', id: '203.0.113.7' };
const accessId: FailureSubject = { kind: 'access-id', id: 'ak_target' };
const total = (tally: ReadonlyArray<readonly [number, number]>) => tally.reduce((sum, [, count]) => sum + count, 0);

describe('DynamoAuthFailureCounter', () => {
  it('answers 100 parallel failures with the counts 1 to 100 each, exactly once, in far fewer writes', async () => {
    const { client, calls } = fakeTable();
    const counter = new DynamoAuthFailureCounter(client, 'table');
    const answers = await Promise.all(Array.from({ length: 100 }, () => counter.add([address, accessId], 1000, 60_005)));
    for (const subject of [0, 1]) expect(answers.map((tallies) => total(tallies[subject]!)).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, index) => index + 1));
    expect(calls.updates).toBeGreaterThanOrEqual(2);
    expect(calls.updates).toBeLessThan(10);
    // Counted in full: a later failure sees all 100.
    expect((await counter.add([address], 1000, 60_006)).map(total)).toEqual([101]);
    expect((await counter.read([address, accessId], 1000)).map(({ current }) => total(current))).toEqual([101, 100]);
  });

  it('keeps subjects and seconds apart, and shares identical reads in flight', async () => {
    const { client, calls } = fakeTable();
    const counter = new DynamoAuthFailureCounter(client, 'table');
    await Promise.all([counter.add([address], 1000, 60_001), counter.add([address], 1000, 60_002), counter.add([accessId], 1000, 60_002)]);
    await counter.add([address], 999, 59_990);
    const reads = await Promise.all(Array.from({ length: 10 }, () => counter.read([address], 1000)));
    expect(calls.batchGets).toBe(1);
    expect(reads[0]).toEqual([{ previous: [[59_990, 1]], current: expect.arrayContaining([[60_001, 1], [60_002, 1]]) }]);
  });
});
