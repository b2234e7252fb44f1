/**
 * Local stand-in for Lambda's DynamoDB stream event source mapping: reads
 * DynamoDB Local's stream of the table with the ordinary Streams API
 * (DescribeStream, GetShardIterator, GetRecords) and invokes the handlers of
 * the same stream trigger table CDK reads (shared/platform/triggers.ts), with the same
 * record shape Lambda delivers. Per shard, records are delivered in order;
 * a shard's children are read once it is closed and drained (shard
 * rollover); any number of shards is read side by side. A handler that throws
 * gets the batch again; one that reports a partial batch failure gets it
 * again from the reported record; after the trigger's retry attempts the
 * batch is logged and dropped (the dead-letter queue's part in AWS).
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import type { _Record as SdkRecord, Shard, ShardIteratorType } from '@aws-sdk/client-dynamodb-streams';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import type { StreamTrigger } from '#shared/platform/triggers.ts';
import { lambdaContext } from './lambda-context.ts';
import { localCredentials } from './ports.ts';

export interface StreamPollerOptions {
  endpoint: string;
  /** A client of one's own (tests inject faults and shard layouts); built from `endpoint` otherwise. */
  client?: DynamoDBStreamsClient;
  streamArn: string;
  triggers: readonly StreamTrigger[];
  functionsDir: string;
  /** Pause between empty reads of an open shard. */
  idlePollMs?: number;
  /** How often the shard list is read again to find new shards. */
  discoverEveryMs?: number;
  retryDelayMs?: number;
  log?: (line: Record<string, unknown>) => void;
  /** Runs a function's module load and invocations in its own container (the local runtime's); in this process's otherwise. */
  invokeAs?: <R>(functionName: string, invoke: () => Promise<R>) => Promise<R>;
}

export interface StreamPoller {
  /** Records read and delivered since start (all triggers). */
  readonly delivered: number;
  close(): Promise<void>;
}

type Handler = (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse | void>;
const GET_RECORDS_LIMIT = 1000;

/**
 * Starts reading. Shards open now are read from their latest position (what
 * happened before start was published by an earlier run, or never will be);
 * shards that appear later are read from their beginning. Returns once every
 * open shard has its position, so no change committed after this resolves is missed.
 *
 * Longer than the house's 80 lines on purpose: its inner steps (list shards,
 * read a shard, deliver with retries, sleep and wake) share the poller's
 * state (known and drained shards, running readers, the stop flag), and as
 * closures over it they read as one poller; split apart they would pass that
 * state around or become a class of the same length.
 */
export async function startStreamPoller(options: StreamPollerOptions): Promise<StreamPoller> {
  const client = options.client ?? new DynamoDBStreamsClient({ endpoint: options.endpoint, region: 'us-east-1', credentials: localCredentials });
  const log = options.log ?? (() => {});
  const idlePollMs = options.idlePollMs ?? 100;
  const handlers = new Map<string, Promise<Handler>>();
  const known = new Set<string>();
  const drained = new Set<string>();
  const readers = new Set<Promise<void>>();
  let stopped = false;
  let delivered = 0;
  const sleepers = new Set<() => void>();

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      sleepers.add(done);
    });
  const wake = () => {
    for (const sleeper of [...sleepers]) sleeper();
  };

  const handlerOf = (name: string): Promise<Handler> => {
    let loaded = handlers.get(name);
    if (!loaded) {
      const invokeAs = options.invokeAs ?? ((_name, invoke) => invoke());
      loaded = invokeAs(name, () => import(pathToFileURL(path.join(options.functionsDir, `${name}.ts`)).href)).then(
        ({ handler }: { handler: Handler }): Handler => (event, context) => invokeAs(name, () => handler(event, context)),
      );
      handlers.set(name, loaded);
    }
    return loaded;
  };

  const listShards = async (): Promise<Shard[]> => {
    const shards: Shard[] = [];
    let start: string | undefined;
    do {
      const { StreamDescription } = await client.send(new DescribeStreamCommand({ StreamArn: options.streamArn, ...(start ? { ExclusiveStartShardId: start } : {}) }));
      shards.push(...(StreamDescription?.Shards ?? []));
      start = StreamDescription?.LastEvaluatedShardId;
    } while (start);
    return shards;
  };

  const iterator = async (shardId: string, type: ShardIteratorType, sequenceNumber?: string): Promise<string | undefined> => {
    const { ShardIterator } = await client.send(
      new GetShardIteratorCommand({ StreamArn: options.streamArn, ShardId: shardId, ShardIteratorType: type, ...(sequenceNumber ? { SequenceNumber: sequenceNumber } : {}) }),
    );
    return ShardIterator;
  };

  /** One trigger's share of the records, delivered in batches with the retry rules of the stack's event source mapping. */
  const deliver = async (trigger: StreamTrigger, records: readonly DynamoDBRecord[]): Promise<void> => {
    const matching = records.filter((record) => matchesTrigger(trigger, record));
    for (let start = 0; start < matching.length; start += trigger.batchSize) await deliverBatch(trigger, matching.slice(start, start + trigger.batchSize), 0);
  };

  /**
   * A reported failure is retried from the record reported; a batch whose
   * invocation fails is halved and each half delivered on its own, in order,
   * the split costing no attempt (bisectBatchOnError), so one record the
   * handler cannot take is dropped alone after its retries, not its batch.
   */
  const deliverBatch = async (trigger: StreamTrigger, records: readonly DynamoDBRecord[], attemptsMade: number): Promise<void> => {
    let batch = records;
    for (let attempt = attemptsMade; batch.length > 0; attempt += 1) {
      if (attempt > trigger.retryAttempts) {
        log({ level: 'ERROR', message: 'stream batch dropped after retries', handler: trigger.handler, records: batch.length, first_sequence_number: batch[0]?.dynamodb?.SequenceNumber });
        return;
      }
      if (attempt > attemptsMade) await sleep(options.retryDelayMs ?? 200);
      try {
        const handler = await handlerOf(trigger.handler);
        const response = await handler({ Records: [...batch] }, lambdaContext(trigger.handler, trigger.sizing));
        const failedFrom = response?.batchItemFailures?.[0]?.itemIdentifier;
        const index = failedFrom === undefined ? -1 : batch.findIndex((record) => record.dynamodb?.SequenceNumber === failedFrom);
        delivered += index === -1 ? batch.length : index;
        batch = index === -1 ? [] : batch.slice(index);
      } catch (error) {
        log({ level: 'WARN', message: 'stream handler failed', handler: trigger.handler, attempt: attempt + 1, records: batch.length, error: String(error) });
        if (batch.length > 1) {
          const half = Math.ceil(batch.length / 2);
          await deliverBatch(trigger, batch.slice(0, half), attempt);
          await deliverBatch(trigger, batch.slice(half), attempt);
          return;
        }
      }
    }
  };

  const readShard = async (shardId: string, type: ShardIteratorType, first: string | undefined): Promise<void> => {
    let position = first ?? (await iterator(shardId, type));
    let lastSequence: string | undefined;
    while (!stopped && position) {
      let result;
      try {
        result = await client.send(new GetRecordsCommand({ ShardIterator: position, Limit: GET_RECORDS_LIMIT }));
      } catch (error) {
        if (stopped) return;
        if ((error as Error).name === 'ExpiredIteratorException') {
          position = lastSequence ? await iterator(shardId, 'AFTER_SEQUENCE_NUMBER', lastSequence) : await iterator(shardId, type);
          continue;
        }
        if ((error as Error).name === 'TrimmedDataAccessException' || (error as Error).name === 'ResourceNotFoundException') break;
        log({ level: 'WARN', message: 'stream read failed; retrying', shard: shardId, error: String(error) });
        await sleep(options.retryDelayMs ?? 200);
        continue;
      }
      const readAt = Date.now();
      const records = (result.Records ?? []).map((record) => lambdaRecord(record, options.streamArn, readAt));
      for (const trigger of options.triggers) await deliver(trigger, records);
      lastSequence = records.at(-1)?.dynamodb?.SequenceNumber ?? lastSequence;
      position = result.NextShardIterator;
      if (position && records.length === 0) await sleep(idlePollMs);
    }
    if (!stopped) {
      // Closed and read to the end: its children may start.
      drained.add(shardId);
      wake();
    }
  };

  const startReader = (shard: Shard, type: ShardIteratorType, first?: string) => {
    const shardId = shard.ShardId as string;
    known.add(shardId);
    const reader = readShard(shardId, type, first).catch((error: unknown) => {
      log({ level: 'ERROR', message: 'stream shard reader stopped', shard: shardId, error: String(error) });
    });
    readers.add(reader);
    void reader.finally(() => readers.delete(reader));
  };

  // Open shards from their latest position, taken before this returns; closed ones are history.
  const initial = await listShards();
  const positions = await Promise.all(
    initial.map(async (shard) => (shard.SequenceNumberRange?.EndingSequenceNumber === undefined ? iterator(shard.ShardId as string, 'LATEST') : undefined)),
  );
  initial.forEach((shard, index) => {
    const position = positions[index];
    if (position) startReader(shard, 'LATEST', position);
    else {
      known.add(shard.ShardId as string);
      drained.add(shard.ShardId as string);
    }
  });

  const discover = (async () => {
    while (!stopped) {
      await sleep(options.discoverEveryMs ?? 1_000);
      if (stopped) break;
      try {
        for (const shard of await listShards()) {
          const id = shard.ShardId as string;
          if (known.has(id)) continue;
          // Children wait until their parent has been read to its end, so a key's changes stay in order.
          if (shard.ParentShardId && known.has(shard.ParentShardId) && !drained.has(shard.ParentShardId)) continue;
          startReader(shard, 'TRIM_HORIZON');
        }
      } catch (error) {
        if (!stopped) log({ level: 'WARN', message: 'stream shard discovery failed', error: String(error) });
      }
    }
  })();

  return {
    get delivered() {
      return delivered;
    },
    async close() {
      stopped = true;
      wake();
      await discover;
      await Promise.allSettled([...readers]);
      if (!options.client) client.destroy();
    },
  };
}

function matchesTrigger(trigger: StreamTrigger, record: DynamoDBRecord): boolean {
  const pk = record.dynamodb?.Keys?.pk?.S;
  return pk !== undefined && trigger.keyPrefixes.some((prefix) => pk.startsWith(prefix));
}

/**
 * The record as Lambda delivers it: the SDK's Date becomes epoch seconds, and the source ARN is added.
 * DynamoDB Local gives the commit time truncated to the minute, where AWS gives it to the second: a
 * change that sets no time of its own (a deletion) would be dated up to a minute before it happened.
 * The moment the poller read the record, a poll after the commit, is the closer stand-in (milliseconds kept).
 */
function lambdaRecord(record: SdkRecord, streamArn: string, readAt: number): DynamoDBRecord {
  const stream = record.dynamodb;
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion,
    eventSource: record.eventSource ?? 'aws:dynamodb',
    awsRegion: record.awsRegion,
    eventSourceARN: streamArn,
    dynamodb: {
      ...(stream?.ApproximateCreationDateTime ? { ApproximateCreationDateTime: Math.max(stream.ApproximateCreationDateTime.getTime(), readAt) / 1000 } : {}),
      // The SDK's attribute values and Lambda's JSON ones differ only in how binary values are typed.
      Keys: stream?.Keys as never,
      ...(stream?.NewImage ? { NewImage: stream.NewImage as never } : {}),
      ...(stream?.OldImage ? { OldImage: stream.OldImage as never } : {}),
      SequenceNumber: stream?.SequenceNumber,
      SizeBytes: stream?.SizeBytes,
      StreamViewType: stream?.StreamViewType,
    },
  };
}
