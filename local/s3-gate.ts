/**
 * IAM's S3 checks, in front of s3rver, which checks none. The local runtime
 * points its functions' S3 endpoint here. A request a function makes is
 * attributed to it (local/function-identity.ts); what that function's bucket grants
 * (shared/bucket-grants.ts, the same data CDK turns into its policy) do not
 * allow is answered 403 AccessDenied, as S3 answers it, and a read of a
 * missing key by a function that may not list the whole bucket is answered
 * 403 rather than 404, as S3 does. Everything else, and every request no
 * function made (a presigned POST or GET from a client, a CLI's), passes
 * through unchanged, Host header included, so s3rver's signature checks still
 * hold. Bodies stream both ways.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BucketGrant, GrantedBucket, RequestedS3Action } from '#shared/bucket-grants.ts';
import { bucketGrantsAllow, mayListWholeBucket } from '#shared/bucket-grants.ts';
import { callingFunction, REFUSED_CALL } from './function-identity.ts';
import type { GateServer } from './gate-server.ts';
import { relay, startGateServer } from './gate-server.ts';

export interface S3GateOptions {
  /** 0: a free one. */
  readonly port: number;
  /** s3rver's endpoint. */
  readonly target: string;
  /** Which granted bucket each bucket name is. */
  readonly buckets: Readonly<Record<string, GrantedBucket>>;
  /** Each function's bucket grants. */
  readonly functions: ReadonlyMap<string, readonly BucketGrant[]>;
  readonly log: (line: Record<string, unknown>) => void;
}

export async function startS3Gate(options: S3GateOptions): Promise<GateServer> {
  return startGateServer({
    name: 's3 gate',
    port: options.port,
    target: options.target,
    log: options.log,
    async handle(req, res, passOn) {
      const caller = callingFunction(req);
      const requested = caller === undefined ? [] : requestedS3Actions(req.method ?? 'GET', req.url ?? '/', req.headers, options.buckets);
      const grants = caller === undefined ? [] : (options.functions.get(caller) ?? []);
      const refused = requested.find((action) => !bucketGrantsAllow(grants, action));
      if (caller !== undefined && refused) {
        options.log({ level: 'ERROR', message: REFUSED_CALL, service: 's3', function: caller, action: refused.action, bucket: refused.bucket, ...(refused.key !== undefined ? { key: refused.key } : {}), ...(refused.prefix !== undefined ? { prefix: refused.prefix } : {}) });
        req.resume();
        accessDenied(res, req.method === 'HEAD');
        return;
      }
      // Host and every header as sent: s3rver checks the signature over them.
      const answer = await passOn(req, res, req.headers, req);
      // S3 tells a caller that may not list the whole bucket nothing about which keys exist.
      const read = requested.find((action) => action.action === 'GetObject' || action.action === 'GetObjectVersion');
      if (answer.statusCode === 404 && read?.bucket !== undefined && !mayListWholeBucket(grants, read.bucket)) {
        answer.resume();
        accessDenied(res, req.method === 'HEAD');
        return;
      }
      await relay(answer, res);
    },
  });
}

/**
 * What S3 authorizes a REST request (path-style: `/<bucket>/<key>`) as. A copy
 * also reads its source (`x-amz-copy-source`); a multipart upload's parts and
 * completion are PutObject; reading or deleting a version names the version
 * actions. An operation the service never makes maps to a name no grant holds.
 */
export function requestedS3Actions(method: string, url: string, headers: IncomingMessage['headers'], buckets: Readonly<Record<string, GrantedBucket>>): RequestedS3Action[] {
  const parsed = new URL(url, 'http://local');
  const [bucketName = '', ...keyParts] = parsed.pathname.slice(1).split('/');
  const bucket = buckets[decodeURIComponent(bucketName)];
  const query = parsed.searchParams;
  // `/<bucket>` and `/<bucket>/` both address the bucket.
  if (keyParts.join('/') === '') {
    if (method === 'GET' || method === 'HEAD') return [{ action: 'ListBucket', bucket, prefix: query.get('prefix') ?? '' }];
    return [{ action: query.has('delete') ? 'DeleteObjects' : `${method} bucket`, bucket }];
  }
  const key = decodeURIComponent(keyParts.join('/'));
  const versioned = query.has('versionId');
  switch (method) {
    case 'GET':
    case 'HEAD':
      return [{ action: versioned ? 'GetObjectVersion' : 'GetObject', bucket, key }];
    case 'PUT': {
      const source = headers['x-amz-copy-source'];
      return [{ action: 'PutObject', bucket, key }, ...(typeof source === 'string' ? [copySourceRead(source, buckets)] : [])];
    }
    case 'POST':
      return [{ action: query.has('uploads') || query.has('uploadId') ? 'PutObject' : 'POST object', bucket, key }];
    case 'DELETE':
      return [{ action: query.has('uploadId') ? 'AbortMultipartUpload' : versioned ? 'DeleteObjectVersion' : 'DeleteObject', bucket, key }];
    default:
      return [{ action: `${method} object`, bucket, key }];
  }
}

/** `x-amz-copy-source`: `<bucket>/<key>[?versionId=...]`, URL-encoded, with or without a leading slash. */
function copySourceRead(source: string, buckets: Readonly<Record<string, GrantedBucket>>): RequestedS3Action {
  const [path = '', query = ''] = source.replace(/^\//, '').split('?');
  const [bucketName = '', ...keyParts] = path.split('/');
  return {
    action: new URLSearchParams(query).has('versionId') ? 'GetObjectVersion' : 'GetObject',
    bucket: buckets[decodeURIComponent(bucketName)],
    key: decodeURIComponent(keyParts.join('/')),
  };
}

/** As S3 answers a request the caller's policies do not allow (a HEAD without a body). */
function accessDenied(res: ServerResponse, head: boolean): void {
  const requestId = randomUUID();
  const text = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message><RequestId>${requestId}</RequestId></Error>`;
  res.writeHead(403, { 'Content-Type': 'application/xml', 'x-amz-request-id': requestId, ...(head ? {} : { 'Content-Length': Buffer.byteLength(text) }) });
  res.end(head ? undefined : text);
}
