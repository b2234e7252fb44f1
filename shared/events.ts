/**
 * Event sources that invoke functions outside the API: the single place the
 * CDK stack (bucket notifications) and the local runtime (s3rver's emitter)
 * read, so both wire the same triggers. Like the route table, nothing here
 * imports handler code.
 */
import type { RouteAccess } from './http/routes.ts';
import { UPLOAD_OBJECT_PREFIX } from './names.ts';

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
  readonly summary: string;
}


export const s3Triggers: readonly S3Trigger[] = [
  {
    handler: 'documents-finalize',
    bucket: 'documents',
    prefix: UPLOAD_OBJECT_PREFIX,
    events: ['s3:ObjectCreated:*'],
    // finalize-upload: HEAD, ranged GET and removal of the posted file; write: the copy to documents/; delete: a copy that lost a race.
    access: { table: 'write', documents: ['finalize-upload', 'write', 'delete'] },
    summary: 'Checks a file posted through an upload session and marks its document available or rejected',
  },
];
