/**
 * Event sources that invoke functions outside the API: the single place the
 * CDK stack (bucket notifications, the table's stream) and the local runtime
 * (s3rver's emitter, the DynamoDB Local stream poller) read, so both wire the
 * same triggers. Like the route table, nothing here imports handler code.
 */
import type { FunctionSizing } from './function-sizing.ts';
import type { RouteAccess } from './routes.ts';
import { UPLOAD_OBJECT_PREFIX } from './names.ts';
import { ITEM_PARTITION_PREFIXES } from './item-kinds.ts';

export interface S3Trigger {
  /** Kebab-case name of the handler module in `functions/` and of the Lambda function. */
  readonly handler: string;
  /** Logical bucket: `documents` is the bucket named by DOCUMENTS_BUCKET. */
  readonly bucket: 'documents';
  /** Only keys under this prefix invoke the handler. */
  readonly prefix: string;
  /** S3 event types, as in a bucket notification configuration. */
  readonly events: ReadonlyArray<'s3:ObjectCreated:*'>;
  readonly access: RouteAccess;
  readonly sizing: FunctionSizing;
  readonly summary: string;
}

export const s3Triggers: readonly S3Trigger[] = [
  {
    handler: 'documents-finalize',
    bucket: 'documents',
    prefix: UPLOAD_OBJECT_PREFIX,
    events: ['s3:ObjectCreated:*'],
    // finalize-upload: HEAD of the posted file, the copy's source, its removal; write: the copy to documents/;
    // read: HEAD and GETs of that copy, which is what is checked; delete: a copy rejected or not kept.
    access: { table: 'write', writes: ['document'], documents: ['finalize-upload', 'write', 'read', 'delete'] },
    // A text upload of 8,000,000 bytes is read in full to check its encoding.
    sizing: { memoryMb: 512, timeoutSeconds: 60 },
    summary: 'Checks a file posted through an upload session and marks its document available or rejected',
  },
];

/** A function fed by the table's DynamoDB stream (NEW_AND_OLD_IMAGES), in batches, per shard in order. */
export interface StreamTrigger {
  readonly handler: string;
  /** Only records whose table partition key starts with one of these reach the handler (Lambda event filtering in AWS). */
  readonly keyPrefixes: readonly string[];
  /** Records per invocation, and how long to gather them (seconds; 0 invokes as soon as records arrive). */
  readonly batchSize: number;
  readonly maxBatchingWindowSeconds: number;
  /** Redeliveries of a failing batch before it goes to the dead-letter queue. */
  readonly retryAttempts: number;
  readonly sizing: FunctionSizing;
  readonly summary: string;
}

export const streamTriggers: readonly StreamTrigger[] = [
  {
    handler: 'events-publish',
    keyPrefixes: [ITEM_PARTITION_PREFIXES.paymethod, ITEM_PARTITION_PREFIXES.document],
    // 100 records make at most 10 PutEvents calls; the window stays well inside the 5 s delivery target.
    batchSize: 100,
    maxBatchingWindowSeconds: 1,
    retryAttempts: 10,
    // A batch is at most ten PutEvents calls; a minute covers the SDK's retries of each.
    sizing: { memoryMb: 256, timeoutSeconds: 60 },
    summary: 'Publishes committed paymethod and document changes from the table stream as EventBridge domain events',
  },
];
