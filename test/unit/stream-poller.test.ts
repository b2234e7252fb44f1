import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import type { _Record as StreamRecord, Shard } from '@aws-sdk/client-dynamodb-streams';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { startStreamPoller } from '#local/dynamodb-streams.ts';
import type { StreamTrigger } from '#shared/platform/triggers.ts';
import { recorder } from '../fixtures/functions/stream-recorder.ts';

/**
 * The local stream poller against a scripted Streams API: several shards read
 * side by side, a shard that closes and is succeeded by a child (rollover),
 * the trigger's key filter, and a partial batch failure redelivered from the
 * reported record. DynamoDB Local keeps one shard, so these cases are only
 * reachable this way.
 */
const functionsDir = fileURLToPath(new URL('../fixtures/functions', import.meta.url));
const STREAM = 'arn:aws:dynamodb:ddblocal:000000000000:table/t/stream/1';
const trigger: StreamTrigger = { handler: 'stream-recorder', keyPrefixes: ['MTH#'], batchSize: 2, maxBatchingWindowSeconds: 0, retryAttempts: 2, sizing: { memoryMb: 256, timeoutSeconds: 60 }, summary: 'test' };

let sequence = 0;
const record = (pk: string): StreamRecord => {
  sequence += 1;
  return { eventID: `e${sequence}`, eventName: 'INSERT', dynamodb: { Keys: { pk: { S: pk }, sk: { S: 'MTH' } }, NewImage: { pk: { S: pk } }, SequenceNumber: String(sequence).padStart(21, '0'), ApproximateCreationDateTime: new Date() } };
};

async function until(condition: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 500 && !condition(); attempt += 1) await sleep(10);
  expect(condition()).toBe(true);
}

afterEach(() => {
  recorder.batches.length = 0;
  recorder.failOnce.clear();
  recorder.poison.clear();
});

describe('local stream poller', () => {
  it('reads shards side by side, a child only after its closed parent is drained, filtered, with partial-failure redelivery', async () => {
    const client = new DynamoDBStreamsClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
    const mock = mockClient(client);
    const parent: Shard = { ShardId: 'A', SequenceNumberRange: { StartingSequenceNumber: '1' } };
    const sibling: Shard = { ShardId: 'C', SequenceNumberRange: { StartingSequenceNumber: '1' } };
    const child: Shard = { ShardId: 'B', ParentShardId: 'A', SequenceNumberRange: { StartingSequenceNumber: '9' } };
    let childListed = false;
    let parentDrained = false;
    mock.on(DescribeStreamCommand).callsFake(() => ({
      StreamDescription: { Shards: childListed ? [{ ...parent, SequenceNumberRange: { StartingSequenceNumber: '1', EndingSequenceNumber: '8' } }, child, sibling] : [parent, sibling] },
    }));
    const iteratorTypes: Record<string, string> = {};
    mock.on(GetShardIteratorCommand).callsFake((input: { ShardId: string; ShardIteratorType: string }) => {
      iteratorTypes[input.ShardId] = input.ShardIteratorType;
      if (input.ShardId === 'B') expect(parentDrained, 'child read before its parent was drained').toBe(true);
      return { ShardIterator: `${input.ShardId}:0` };
    });
    const pages: Record<string, { Records: StreamRecord[]; NextShardIterator?: string }> = {
      'A:0': { Records: [record('MTH#a1'), record('CST#skip'), record('MTH#a2'), record('MTH#a3')], NextShardIterator: 'A:1' },
      'A:1': { Records: [record('MTH#a4')] },
      'C:0': { Records: [record('MTH#c1')], NextShardIterator: 'C:1' },
      'C:1': { Records: [], NextShardIterator: 'C:1' },
      'B:0': { Records: [record('MTH#b1')], NextShardIterator: 'B:1' },
      'B:1': { Records: [], NextShardIterator: 'B:1' },
    };
    mock.on(GetRecordsCommand).callsFake((input: { ShardIterator: string }) => {
      if (input.ShardIterator === 'A:1') {
        parentDrained = true;
        childListed = true;
      }
      return pages[input.ShardIterator];
    });
    recorder.failOnce.add('MTH#a2');

    const poller = await startStreamPoller({ endpoint: 'http://unused', client, streamArn: STREAM, triggers: [trigger], functionsDir, idlePollMs: 5, discoverEveryMs: 10, retryDelayMs: 1 });
    try {
      await until(() => recorder.batches.flat().includes('MTH#b1') && recorder.batches.flat().includes('MTH#c1'));
    } finally {
      await poller.close();
      mock.restore();
    }

    const fromA = recorder.batches.filter((batch) => batch.some((pk) => /#a/.test(pk)));
    // Batches of two; a2 reported failed, so a2 and what follows it in that batch come again.
    expect(fromA).toEqual([['MTH#a1', 'MTH#a2'], ['MTH#a2'], ['MTH#a3'], ['MTH#a4']]);
    const order = recorder.batches.flat();
    expect(order.indexOf('MTH#b1')).toBeGreaterThan(order.indexOf('MTH#a4'));
    expect(order).not.toContain('CST#skip');
    expect(iteratorTypes).toEqual({ A: 'LATEST', C: 'LATEST', B: 'TRIM_HORIZON' });
  });

  it('halves a batch whose invocation fails, so a record the handler cannot take is dropped alone after its retries', async () => {
    const client = new DynamoDBStreamsClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
    const mock = mockClient(client);
    mock.on(DescribeStreamCommand).resolves({ StreamDescription: { Shards: [{ ShardId: 'A', SequenceNumberRange: { StartingSequenceNumber: '1' } }] } });
    mock.on(GetShardIteratorCommand).resolves({ ShardIterator: 'A:0' });
    const pages: Record<string, { Records: StreamRecord[]; NextShardIterator?: string }> = {
      'A:0': { Records: ['MTH#p1', 'MTH#p2', 'MTH#p3', 'MTH#p4', 'MTH#p5'].map((pk) => record(pk)), NextShardIterator: 'A:1' },
      'A:1': { Records: [], NextShardIterator: 'A:1' },
    };
    mock.on(GetRecordsCommand).callsFake((input: { ShardIterator: string }) => pages[input.ShardIterator]);
    recorder.poison.add('MTH#p3');

    const poller = await startStreamPoller({ endpoint: 'http://unused', client, streamArn: STREAM, triggers: [{ ...trigger, batchSize: 4 }], functionsDir, idlePollMs: 5, discoverEveryMs: 10, retryDelayMs: 1 });
    try {
      await until(() => recorder.batches.flat().includes('MTH#p5'));
    } finally {
      await poller.close();
      mock.restore();
    }
    // 4 fails, its halves go alone: [p1, p2] passes, [p3, p4] fails and is halved again; p3 alone fails 1 + 2 retries.
    expect(recorder.batches).toEqual([['MTH#p1', 'MTH#p2', 'MTH#p3', 'MTH#p4'], ['MTH#p1', 'MTH#p2'], ['MTH#p3', 'MTH#p4'], ['MTH#p3'], ['MTH#p3'], ['MTH#p3'], ['MTH#p4'], ['MTH#p5']]);
  });
});
