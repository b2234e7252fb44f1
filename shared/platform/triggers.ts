/**
 * Event sources that invoke functions outside the API: the single place the
 * CDK stack (bucket notifications, the table's stream) and the local runtime
 * (s3rver's emitter, the DynamoDB Local stream poller) read, so both wire the
 * same triggers. Like the route table, nothing here imports handler code.
 */
import type { FunctionSizing } from './function-sizing.ts';
import type { RouteAccess } from './routes.ts';
import { DOCUMENT_OBJECT_PREFIX, UPLOAD_OBJECT_PREFIX } from './names.ts';
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
    access: { table: 'write', writes: ['document', 'documentHash'], documents: ['finalize-upload', 'write', 'read', 'delete'] },
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

/**
 * A function invoked by an EventBridge rule on the account's default bus,
 * matching events of `source` and `detailType` about objects of `bucket`
 * (`detail.s3ObjectDetails.bucketName`). In AWS a rule; locally the runtime
 * delivers the events its stand-ins produce (local/malware-scanner.ts) to the
 * same handler, through the same table.
 */
export interface EventRuleTrigger {
  readonly handler: string;
  readonly source: string;
  readonly detailType: string;
  readonly bucket: 'documents';
  readonly access: RouteAccess;
  readonly sizing: FunctionSizing;
  readonly summary: string;
}

/** The GuardDuty Malware Protection for S3 scan of the documents bucket: which objects it scans, and the tag its verdict sets. */
export const MALWARE_SCAN = {
  /** Only stored files: uploads are copied under documents/ before anything keeps them, and that copy is what is scanned. */
  objectPrefixes: [DOCUMENT_OBJECT_PREFIX],
  tagKey: 'GuardDutyMalwareScanStatus',
  cleanTagValue: 'NO_THREATS_FOUND',
  source: 'aws.guardduty',
  detailType: 'GuardDuty Malware Protection Object Scan Result',
} as const;

/** Functions the bucket policy lets read a stored file before its scan: the finalizer checks the copy it is about to keep. */
export const READS_BEFORE_SCAN: readonly string[] = ['documents-finalize'];

export const eventRuleTriggers: readonly EventRuleTrigger[] = [
  {
    handler: 'documents-scan-result',
    source: MALWARE_SCAN.source,
    detailType: MALWARE_SCAN.detailType,
    bucket: 'documents',
    // The verdict on the record; an infected file's version removed; a clean retained file locked; a file whose
    // record is not written yet found by listing (shared/domain/documents/scan-result.ts).
    access: { table: 'write', writes: ['document'], documents: ['purge-infected', 'retain', 'list-copies'] },
    sizing: { memoryMb: 256, timeoutSeconds: 30 },
    summary: 'Records a malware scan result on its document: clean files are served, infected bytes removed',
  },
];
