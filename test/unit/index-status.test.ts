import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import type { IndexStatus } from '../../scripts/index-status.ts';
import { indexStatus, waitForIndexes } from '../../scripts/index-status.ts';

/** DescribeTable answers in turn, as DynamoDB gives them while it creates and fills an index. */
function describing(...answers: Array<Array<{ IndexName: string; IndexStatus: string; Backfilling?: boolean }>>) {
  let call = 0;
  return {
    calls: () => call,
    client: { send: async () => ({ Table: { GlobalSecondaryIndexes: answers[Math.min(call++, answers.length - 1)] } }) } as unknown as Pick<DynamoDBClient, 'send'>,
  };
}

describe('index status', () => {
  it('is ready only when every index is ACTIVE and none is backfilling, listed in index order', async () => {
    const { client } = describing([
      { IndexName: 'gsi10', IndexStatus: 'ACTIVE' },
      { IndexName: 'gsi9', IndexStatus: 'ACTIVE' },
      { IndexName: 'gsi13', IndexStatus: 'CREATING', Backfilling: true },
    ]);
    const status = await indexStatus(client, 'table');
    expect(status.indexes.map((index) => index.index)).toEqual(['gsi9', 'gsi10', 'gsi13']);
    expect(status.ready).toBe(false);
    // ACTIVE with the backfill still reported is not readable either.
    expect((await indexStatus(describing([{ IndexName: 'gsi10', IndexStatus: 'ACTIVE', Backfilling: true }]).client, 'table')).ready).toBe(false);
    expect((await indexStatus(describing([{ IndexName: 'gsi10', IndexStatus: 'ACTIVE', Backfilling: false }]).client, 'table')).ready).toBe(true);
  });

  it('waits, asking again at the interval, until the backfill ends, and reports each answer not yet ready', async () => {
    const { client, calls } = describing(
      [{ IndexName: 'gsi10', IndexStatus: 'CREATING', Backfilling: true }],
      [{ IndexName: 'gsi10', IndexStatus: 'CREATING', Backfilling: true }],
      [{ IndexName: 'gsi10', IndexStatus: 'ACTIVE' }],
    );
    const slept: number[] = [];
    const pending: IndexStatus[] = [];
    const status = await waitForIndexes(client, 'table', { intervalMs: 15_000, onPending: (answer) => pending.push(answer), sleep: async (ms) => void slept.push(ms) });
    expect(status).toEqual({ table: 'table', indexes: [{ index: 'gsi10', status: 'ACTIVE', backfilling: false }], ready: true });
    expect(calls()).toBe(3);
    expect(slept).toEqual([15_000, 15_000]);
    expect(pending.map((answer) => answer.indexes[0]!.status)).toEqual(['CREATING', 'CREATING']);
  });
});
