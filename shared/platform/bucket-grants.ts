/**
 * What each function may do in the S3 buckets, as data: CDK turns these
 * grants into IAM statements (infra/access.ts), and the local runtime refuses
 * what they do not allow, as S3 would (local/s3-gate.ts). A function that
 * deletes under a prefix it was not given then fails in every local test, not
 * first in AWS. The KMS use S3 makes on a function's behalf (SSE-KMS) is
 * granted beside these, in infra/. Nothing here imports the AWS SDK or CDK.
 */
import type { RouteAccess } from './routes.ts';
import { DOCUMENT_OBJECT_PREFIX, UPLOAD_OBJECT_PREFIX } from './names.ts';

/** Object actions, and ListBucket on the bucket itself. HeadObject is GetObject; a version's read is GetObjectVersion. */
export type S3Action =
  | 'GetObject'
  | 'GetObjectVersion'
  | 'PutObject'
  | 'DeleteObject'
  | 'DeleteObjectVersion'
  | 'PutObjectRetention'
  | 'PutObjectLegalHold'
  | 'AbortMultipartUpload'
  | 'ListBucket';

export type GrantedBucket = 'documents' | 'reports';

export interface BucketGrant {
  readonly bucket: GrantedBucket;
  readonly actions: readonly S3Action[];
  /**
   * Object actions apply to the keys under these prefixes. ListBucket is
   * conditioned on them (`s3:prefix`); '' is the whole bucket, unconditioned,
   * which is also what makes S3 answer a HEAD or GET of a missing key with 404
   * rather than 403.
   */
  readonly prefixes: readonly string[];
}

export type DocumentUsage = NonNullable<RouteAccess['documents']>[number];

/** The documents bucket's grants per usage a route declares. */
export const DOCUMENT_USAGE_GRANTS: Readonly<Record<DocumentUsage, readonly BucketGrant[]>> = {
  read: [{ bucket: 'documents', actions: ['GetObject'], prefixes: [DOCUMENT_OBJECT_PREFIX] }],
  write: [{ bucket: 'documents', actions: ['PutObject'], prefixes: [DOCUMENT_OBJECT_PREFIX] }],
  // A presigned POST carries the signer's authority: the function needs what the upload needs, under uploads/ only.
  'presign-upload': [{ bucket: 'documents', actions: ['PutObject'], prefixes: [UPLOAD_OBJECT_PREFIX] }],
  delete: [{ bucket: 'documents', actions: ['DeleteObject'], prefixes: [DOCUMENT_OBJECT_PREFIX] }],
  // Deleting a document whose upload session never finished removes the posted file too.
  'delete-upload': [{ bucket: 'documents', actions: ['DeleteObject'], prefixes: [UPLOAD_OBJECT_PREFIX] }],
  // Object Lock of a stored file: its retention (governance mode; no grant anywhere holds s3:BypassGovernanceRetention) and legal hold.
  retain: [{ bucket: 'documents', actions: ['PutObjectRetention', 'PutObjectLegalHold'], prefixes: [DOCUMENT_OBJECT_PREFIX] }],
  // An infected file's bytes removed for good: its version, which a plain delete would leave in the versioned bucket.
  'purge-infected': [{ bucket: 'documents', actions: ['DeleteObject', 'DeleteObjectVersion'], prefixes: [DOCUMENT_OBJECT_PREFIX] }],
  // Deleting a pending session finds the finalizer's checked copies, under documents/<org>/<doc>/, by listing.
  'list-copies': [{ bucket: 'documents', actions: ['ListBucket'], prefixes: [DOCUMENT_OBJECT_PREFIX] }],
  // The finalizer reads a posted file (HEAD, copy source) and removes it once copied or rejected.
  // A repeated event HEADs an upload already removed: it must read "gone" (404), not fail on a 403 into the dead-letter queue.
  'finalize-upload': [
    { bucket: 'documents', actions: ['GetObject', 'DeleteObject'], prefixes: [UPLOAD_OBJECT_PREFIX] },
    { bucket: 'documents', actions: ['ListBucket'], prefixes: [''] },
  ],
};

/** The part of a function's declared access (shared/platform/function-environment.ts) its bucket grants follow from. */
export interface BucketAccess {
  readonly documents?: readonly DocumentUsage[];
  /** Grants of its own (the Account Updater's functions in the reports bucket). */
  readonly s3?: readonly BucketGrant[];
}

export function bucketGrants(access: BucketAccess): BucketGrant[] {
  return [...(access.documents ?? []).flatMap((usage) => DOCUMENT_USAGE_GRANTS[usage]), ...(access.s3 ?? [])];
}

/** One action a request asks for, as S3 authorizes it: a copy is a PutObject of the target and a read of the source. */
export interface RequestedS3Action {
  readonly action: string;
  readonly bucket: GrantedBucket | undefined;
  /** The object's key, for object actions. */
  readonly key?: string;
  /** The listed prefix, for ListBucket ('' when none). */
  readonly prefix?: string;
}

/** IAM's reading: some grant names the action on the bucket, for that key (or, listing, that prefix). */
export function bucketGrantsAllow(grants: readonly BucketGrant[], requested: RequestedS3Action): boolean {
  return grants.some((grant) => {
    if (grant.bucket !== requested.bucket || !(grant.actions as readonly string[]).includes(requested.action)) return false;
    if (requested.action === 'ListBucket') return grant.prefixes.some((prefix) => prefix === '' || (requested.prefix ?? '').startsWith(prefix));
    return requested.key !== undefined && grant.prefixes.some((prefix) => requested.key!.startsWith(prefix));
  });
}

/** Whether S3 would tell this caller a key is missing (404) rather than forbidden (403): it may list the whole bucket. */
export function mayListWholeBucket(grants: readonly BucketGrant[], bucket: GrantedBucket): boolean {
  return grants.some((grant) => grant.bucket === bucket && grant.actions.includes('ListBucket') && grant.prefixes.includes(''));
}
