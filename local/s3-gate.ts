/**
 * S3's own checks, in front of s3rver, which makes none: every request is
 * signed (SigV4 in its Authorization header, or a presigned URL) by a
 * credential the runtime issued (local/signing-credentials.ts), and a form
 * upload (POST) carries a signed policy it keeps to (local/s3-post-policy.ts).
 * The signer is the caller: the operator (the runtime, the CLIs) may do
 * anything, and a function only what its bucket grants (shared/platform/bucket-grants.ts,
 * the same data CDK turns into its policy) allow, whether it calls itself or
 * hands out a presigned URL or form. What is refused is answered as S3 answers
 * it; a read of a missing key by a function that may not list the whole
 * bucket is 403 rather than 404, as S3 does. What passes goes on to s3rver
 * re-signed with s3rver's own key. Bodies stream both ways, a form's excepted
 * (read whole to check it, up to MAX_FORM_BYTES).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { BucketGrant, GrantedBucket, RequestedS3Action } from '#shared/platform/bucket-grants.ts';
import { bucketGrantsAllow, mayListWholeBucket } from '#shared/platform/bucket-grants.ts';
import { REFUSED_CALL } from './function-identity.ts';
import type { GateServer, PassOn } from './gate-server.ts';
import { relay, startGateServer } from './gate-server.ts';
import { localCredentials } from './ports.ts';
import { parsePolicy, policyFailure, readPostForm } from './s3-post-policy.ts';
import type { Principal } from './signing-credentials.ts';
import { principalName } from './signing-credentials.ts';
import { parseQuery, signHeaders } from './sigv4.ts';
import type { SignatureRefusal, SignatureVerifier } from './sigv4.ts';
import { readBoundedBody } from './standin-http.ts';

/** The largest form upload the gate reads (the service's forms allow 8,000,000 bytes). */
const MAX_FORM_BYTES = 64 * 1024 * 1024;
/** What a presigned URL adds to a request's query to sign it; none of it goes on to s3rver. */
const SIGNATURE_QUERY_PARAMETERS = new Set(['x-amz-algorithm', 'x-amz-credential', 'x-amz-date', 'x-amz-expires', 'x-amz-signedheaders', 'x-amz-signature', 'x-amz-security-token']);

export interface S3GateOptions {
  /** 0: a free one. */
  readonly port: number;
  /** s3rver's endpoint. */
  readonly target: string;
  /** Which granted bucket each bucket name is. */
  readonly buckets: Readonly<Record<string, GrantedBucket>>;
  /** Each function's bucket grants. */
  readonly functions: ReadonlyMap<string, readonly BucketGrant[]>;
  readonly verifier: SignatureVerifier;
  readonly log: (line: Record<string, unknown>) => void;
}

export async function startS3Gate(options: S3GateOptions): Promise<GateServer> {
  return startGateServer({
    name: 's3 gate',
    port: options.port,
    target: options.target,
    log: options.log,
    async handle(req, res, passOn) {
      const head = req.method === 'HEAD';
      if (isFormUpload(req)) return handleFormUpload(req, res, passOn, options);
      const check = await options.verifier.verifyRequest({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers }, 's3');
      if (!check.ok) return refuse(req, res, signatureRefusal(check.refusal), head);
      const grants = grantsOf(check.principal, options.functions);
      const requested = requestedS3Actions(req.method ?? 'GET', req.url ?? '/', req.headers, options.buckets);
      const refused = grants && requested.find((action) => !bucketGrantsAllow(grants, action));
      if (refused) {
        logRefusal(options.log, check.principal, refused);
        return refuse(req, res, ACCESS_DENIED, head);
      }
      const answer = await passOnSigned(req, res, passOn, req);
      // S3 tells a caller that may not list the whole bucket nothing about which keys exist.
      const read = requested.find((action) => action.action === 'GetObject' || action.action === 'GetObjectVersion');
      if (grants && answer.statusCode === 404 && read?.bucket !== undefined && !mayListWholeBucket(grants, read.bucket)) {
        answer.resume();
        return refuse(req, res, ACCESS_DENIED, head);
      }
      await relay(answer, res);
    },
  });
}

/** A browser form upload: POST to the bucket itself, multipart/form-data. */
function isFormUpload(req: IncomingMessage): boolean {
  const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
  return req.method === 'POST' && /^\/[^/]+\/?$/.test(path) && /^multipart\/form-data/i.test(req.headers['content-type'] ?? '');
}

/** A form upload is allowed by its policy's signature, its conditions, and its signer's grants for the key it names. */
async function handleFormUpload(req: IncomingMessage, res: ServerResponse, passOn: PassOn, options: S3GateOptions): Promise<void> {
  const tooLarge = new Error('form too large');
  const body = await readBoundedBody(req, MAX_FORM_BYTES, () => tooLarge).catch((error: unknown) => {
    if (error === tooLarge) return undefined;
    throw error;
  });
  if (!body) return refuse(req, res, { status: 400, code: 'EntityTooLarge', message: 'Your proposed upload exceeds the maximum allowed size' }, false);
  const form = await readPostForm(body, req.headers).catch(() => undefined);
  if (!form) return refuse(req, res, { status: 400, code: 'MalformedPOSTRequest', message: 'The body of your POST request is not well-formed multipart/form-data.' }, false);
  const policy = form.fields.policy === undefined ? undefined : parsePolicy(form.fields.policy);
  if (!policy) return refuse(req, res, form.fields.policy === undefined ? ACCESS_DENIED : { status: 400, code: 'InvalidPolicyDocument', message: 'Invalid Policy: Invalid JSON.' }, false);
  const check = await options.verifier.verifyPostPolicy(form.fields, policy.expiration);
  if (!check.ok) return refuse(req, res, check.refusal === 'expired' ? { ...ACCESS_DENIED, message: 'Invalid according to Policy: Policy expired.' } : signatureRefusal(check.refusal), false);
  const bucketName = decodeURIComponent((req.url ?? '/').split('?', 1)[0]!.replace(/^\/|\/$/g, ''));
  const failure = policyFailure(form, policy, bucketName);
  if (failure) return refuse(req, res, failure, false);
  const grants = grantsOf(check.principal, options.functions);
  const requested: RequestedS3Action = { action: 'PutObject', bucket: options.buckets[bucketName], key: form.fields.key ?? '' };
  if (grants && !bucketGrantsAllow(grants, requested)) {
    logRefusal(options.log, check.principal, requested);
    return refuse(req, res, ACCESS_DENIED, false);
  }
  await relay(await passOn(req, res, { ...req.headers, 'content-length': String(body.length) }, body), res);
}

/** Passes a request on to s3rver under s3rver's own key, the caller's signature (header or query) taken off. */
async function passOnSigned(req: IncomingMessage, res: ServerResponse, passOn: PassOn, body: IncomingMessage): Promise<IncomingMessage> {
  const [path = '/', rawQuery = ''] = (req.url ?? '/').split('?', 2);
  const kept = rawQuery.split('&').filter((pair) => pair !== '' && !SIGNATURE_QUERY_PARAMETERS.has(decodeURIComponent(pair.split('=', 1)[0]!).toLowerCase()));
  const url = kept.length > 0 ? `${path}?${kept.join('&')}` : path;
  const headers: IncomingHttpHeaders = { ...req.headers };
  delete headers.authorization;
  const contentSha256 = headers['x-amz-content-sha256'];
  const signed = await signHeaders(
    localCredentials,
    { method: req.method ?? 'GET', path, query: parseQuery(url) ?? {}, headers: { host: req.headers.host ?? '', ...(typeof contentSha256 === 'string' ? { 'x-amz-content-sha256': contentSha256 } : {}) } },
    's3',
  );
  return passOn(req, res, { ...headers, ...signed }, body, url);
}

/** The operator's calls are unrestricted (undefined); a function's are held to its grants. */
function grantsOf(principal: Principal, functions: ReadonlyMap<string, readonly BucketGrant[]>): readonly BucketGrant[] | undefined {
  return principal.kind === 'operator' ? undefined : (functions.get(principal.name) ?? []);
}

function logRefusal(log: S3GateOptions['log'], principal: Principal, refused: RequestedS3Action): void {
  log({ level: 'ERROR', message: REFUSED_CALL, service: 's3', function: principalName(principal), action: refused.action, bucket: refused.bucket, ...(refused.key !== undefined ? { key: refused.key } : {}), ...(refused.prefix !== undefined ? { prefix: refused.prefix } : {}) });
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

/** An S3 error answer. */
interface S3Refusal {
  readonly status: number;
  readonly code: string;
  readonly message: string;
}

const ACCESS_DENIED: S3Refusal = { status: 403, code: 'AccessDenied', message: 'Access Denied' };

/** As S3 answers a request whose signature does not hold. */
function signatureRefusal(refusal: SignatureRefusal): S3Refusal {
  switch (refusal) {
    case 'unknown-key':
      return { status: 403, code: 'InvalidAccessKeyId', message: 'The AWS Access Key Id you provided does not exist in our records.' };
    case 'mismatch':
      return { status: 403, code: 'SignatureDoesNotMatch', message: 'The request signature we calculated does not match the signature you provided. Check your key and signing method.' };
    case 'skewed':
      return { status: 403, code: 'RequestTimeTooSkewed', message: 'The difference between the request time and the current time is too large.' };
    case 'expired':
      return { ...ACCESS_DENIED, message: 'Request has expired' };
    case 'malformed':
    case 'missing':
      return ACCESS_DENIED;
  }
}

/** Answers as S3 does (a HEAD without a body); the rest of the request is drained, not read. */
function refuse(req: IncomingMessage, res: ServerResponse, refusal: S3Refusal, head: boolean): void {
  req.resume();
  const requestId = randomUUID();
  const text = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${refusal.code}</Code><Message>${refusal.message}</Message><RequestId>${requestId}</RequestId></Error>`;
  res.writeHead(refusal.status, { 'Content-Type': 'application/xml', 'x-amz-request-id': requestId, ...(head ? {} : { 'Content-Length': Buffer.byteLength(text) }) });
  res.end(head ? undefined : text);
}
