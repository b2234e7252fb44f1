import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context, S3Event, S3EventRecord } from 'aws-lambda';
import type S3rver from 's3rver';
import type { S3Trigger } from '#shared/platform/triggers.ts';
import { lambdaContext } from './lambda-context.ts';

/**
 * Local stand-in for S3 bucket notifications to Lambda: s3rver's `event`
 * records are matched against the same trigger table CDK reads
 * (shared/platform/triggers.ts) and delivered like an asynchronous invocation, retried
 * twice on failure, as Lambda does.
 */

interface S3rverRecord {
  eventName: string;
  eventTime: string;
  awsRegion?: string;
  s3: { bucket: { name: string }; object: { key: string; size?: number; eTag?: string; sequencer?: string } };
}

export interface S3EventRouterOptions {
  server: S3rver;
  triggers: readonly S3Trigger[];
  /** Logical bucket name -> actual bucket. */
  buckets: Readonly<Record<S3Trigger['bucket'], string>>;
  functionsDir: string;
  /** Runs a function's invocation as that function (local/runtime.ts: in its own container). */
  invokeAs?: <R>(functionName: string, invoke: () => Promise<R>) => Promise<R>;
  retryDelayMs?: number;
  log?: (line: Record<string, unknown>) => void;
}

const ASYNC_RETRIES = 2;

export function routeS3Events(options: S3EventRouterOptions): { close(): Promise<void> } {
  const inFlight = new Set<Promise<void>>();
  const log = options.log ?? (() => {});
  const listener = (event: { Records?: S3rverRecord[] }) => {
    for (const record of event.Records ?? []) {
      for (const trigger of options.triggers) {
        if (!matches(trigger, record, options.buckets)) continue;
        // Asynchronous, as in AWS: the client's PUT or POST is answered first.
        const delivery = new Promise<void>((resolve) => setImmediate(resolve)).then(() => deliver(trigger, toLambdaEvent(trigger, record)));
        inFlight.add(delivery);
        void delivery.finally(() => inFlight.delete(delivery));
      }
    }
  };
  options.server.on('event', listener);

  async function deliver(trigger: S3Trigger, event: S3Event): Promise<void> {
    const invokeAs = options.invokeAs ?? ((_name, invoke) => invoke());
    const module = (await invokeAs(trigger.handler, () => import(pathToFileURL(path.join(options.functionsDir, `${trigger.handler}.ts`)).href))) as {
      handler: (event: S3Event, context: Context) => Promise<unknown>;
    };
    for (let attempt = 0; attempt <= ASYNC_RETRIES; attempt += 1) {
      try {
        await invokeAs(trigger.handler, () => module.handler(event, lambdaContext(trigger.handler, trigger.sizing)));
        return;
      } catch (error) {
        log({ level: 'WARN', message: 's3 event handler failed', handler: trigger.handler, attempt: attempt + 1, error: String(error) });
        if (attempt < ASYNC_RETRIES) await sleep(options.retryDelayMs ?? 200);
      }
    }
    log({ level: 'ERROR', message: 's3 event dropped after retries', handler: trigger.handler });
  }

  return {
    close: async () => {
      options.server.off('event', listener);
      await Promise.allSettled([...inFlight]);
    },
  };
}

function matches(trigger: S3Trigger, record: S3rverRecord, buckets: S3EventRouterOptions['buckets']): boolean {
  return (
    record.s3.bucket.name === buckets[trigger.bucket] &&
    record.s3.object.key.startsWith(trigger.prefix) &&
    trigger.events.some((pattern) => pattern === 's3:ObjectCreated:*' && record.eventName.startsWith('ObjectCreated:'))
  );
}

/** The record shape Lambda receives from S3; the key is URL-encoded with '+' for spaces, as in AWS. */
function toLambdaEvent(trigger: S3Trigger, record: S3rverRecord): S3Event {
  const bucket = record.s3.bucket.name;
  const lambdaRecord: S3EventRecord = {
    eventVersion: '2.1',
    eventSource: 'aws:s3',
    awsRegion: record.awsRegion ?? 'us-east-1',
    eventTime: record.eventTime,
    eventName: record.eventName,
    userIdentity: { principalId: 'AWS:LOCAL' },
    requestParameters: { sourceIPAddress: '127.0.0.1' },
    responseElements: { 'x-amz-request-id': randomUUID(), 'x-amz-id-2': randomUUID() },
    s3: {
      s3SchemaVersion: '1.0',
      configurationId: trigger.handler,
      bucket: { name: bucket, ownerIdentity: { principalId: 'LOCAL' }, arn: `arn:aws:s3:::${bucket}` },
      object: {
        key: encodeURIComponent(record.s3.object.key).replace(/%2F/g, '/').replace(/%20/g, '+'),
        size: record.s3.object.size ?? 0,
        eTag: record.s3.object.eTag ?? '',
        sequencer: record.s3.object.sequencer ?? '',
      },
    },
  };
  return { Records: [lambdaRecord] };
}
