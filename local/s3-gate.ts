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
 * (read whole to check it, up to MAX_FORM_BYTES). The server and the reading
 * of grants are those of every local endpoint (local/gate-server.ts,
 * local/function-identity.ts); S3's own ways of signing (presigned URLs,
 * forms) are checked here.
 */
import { randomUUID } from 'node:crypto';
import { GetObjectTaggingCommand, S3Client } from '@aws-sdk/client-s3';
import { MALWARE_SCAN, READS_BEFORE_SCAN } from '#shared/platform/triggers.ts';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { BucketGrant, GrantedBucket, RequestedS3Action } from '#shared/platform/bucket-grants.ts';
import { bucketGrantsAllow, mayListWholeBucket } from '#shared/platform/bucket-grants.ts';
import { grantsOf, logRefusal } from './function-identity.ts';
import type { GateOptions, GateServer, PassOn, ServiceProtocol } from './gate-server.ts';
import { AwsServiceError, connectTo, readBoundedBody, relay, startGateServer } from './gate-server.ts';
import { localCredentials } from './ports.ts';
import { ObjectLocks } from './s3-object-lock.ts';
import { parsePolicy, policyFailure, readPostForm } from './s3-post-policy.ts';
import type { Principal } from './signing-credentials.ts';
import { parseQuery, signHeaders } from './sigv4.ts';
import type { SignatureRefusal } from './sigv4.ts';

/** The largest form upload the gate reads (the service's forms allow 8,000,000 bytes). */
const MAX_FORM_BYTES = 64 * 1024 * 1024;
/** What a presigned URL adds to a request's query to sign it; none of it goes on to s3rver. */
const SIGNATURE_QUERY_PARAMETERS = new Set(['x-amz-algorithm', 'x-amz-credential', 'x-amz-date', 'x-amz-expires', 'x-amz-signedheaders', 'x-amz-signature', 'x-amz-security-token']);

export interface S3GateOptions extends GateOptions<GrantedBucket, BucketGrant> {
  /** s3rver's endpoint. */
  readonly target: string;
}

export async function startS3Gate(options: S3GateOptions): Promise<GateServer> {
  const emulator = connectTo(options.target);
  const locks = new ObjectLocks();
  // The gate's own reads of s3rver (an object's tags), under s3rver's key.
  const direct = new S3Client({ endpoint: options.target, region: 'us-east-1', credentials: localCredentials, forcePathStyle: true });
  return startGateServer({
    name: 's3 gate',
    port: options.port,
    protocol: S3_PROTOCOL,
    log: options.log,
    closed: () => {
      emulator.close();
      direct.destroy();
    },
    async handle(req, res) {
      if (isFormUpload(req)) return handleFormUpload(req, res, emulator.passOn, options);
      const check = await options.verifier.verifyRequest({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers }, 's3');
      if (!check.ok) throw signatureRefusal(check.refusal);
      const grants = grantsOf(check.principal, options.functions);
      const requested = requestedS3Actions(req.method ?? 'GET', req.url ?? '/', req.headers, options.resources);
      const refused = grants && requested.find((action) => !bucketGrantsAllow(grants, action));
      if (refused) refuse(options, check.principal, refused);
      const object = objectOf(req.url ?? '/');
      if (object) {
        // Object Lock: answered here, or a removal refused, before s3rver sees anything.
        if (await objectLock(req, res, object, locks)) return;
        // The bucket policy's scan gate: a stored file is read only once its scan tag says clean.
        const read = requested.find((action) => action.action === 'GetObject' || action.action === 'GetObjectVersion');
        if (read && options.resources[object.bucket] === 'documents' && check.principal.kind === 'function' && !READS_BEFORE_SCAN.includes(check.principal.name)) {
          await refuseUnscanned(direct, object, () => {
            // The bucket policy's refusal, not a missing grant: by design, whenever a file is read before its scan says clean.
            options.log({ level: 'WARN', message: 'the bucket policy refused a read of a file not scanned clean', service: 's3', function: check.principal.kind === 'function' ? check.principal.name : 'operator', key: object.key });
            throw accessDenied();
          });
        }
      }
      const answer = await passOnSigned(req, res, emulator.passOn, req);
      if (object && req.method === 'DELETE' && (answer.statusCode ?? 500) < 300 && object.subresource === undefined) locks.forget(object.bucket, object.key);
      // S3 tells a caller that may not list the whole bucket nothing about which keys exist.
      const read = requested.find((action) => action.action === 'GetObject' || action.action === 'GetObjectVersion');
      if (grants && answer.statusCode === 404 && read?.bucket !== undefined && !mayListWholeBucket(grants, read.bucket)) {
        answer.resume();
        throw accessDenied();
      }
      await relay(answer, res);
    },
  });
}

/** `/<bucket>/<key>?<subresource>`, for an object request; undefined for a bucket request. */
function objectOf(url: string): { bucket: string; key: string; subresource: string | undefined } | undefined {
  const parsed = new URL(url, 'http://local');
  const [bucketName = '', ...keyParts] = parsed.pathname.slice(1).split('/');
  if (keyParts.join('/') === '') return undefined;
  const subresource = ['retention', 'legal-hold', 'tagging', 'uploadId', 'uploads'].find((name) => parsed.searchParams.has(name));
  return { bucket: decodeURIComponent(bucketName), key: decodeURIComponent(keyParts.join('/')), subresource };
}

/**
 * Object Lock's part of a request: PutObjectRetention / PutObjectLegalHold and their GETs answered from the gate's
 * own state (true: answered), and a delete or an overwrite of a locked object refused (its signer's grants were
 * already checked, so a bypass header means the signer may bypass).
 */
async function objectLock(req: IncomingMessage, res: ServerResponse, object: { bucket: string; key: string; subresource: string | undefined }, locks: ObjectLocks): Promise<boolean> {
  const bypass = String(req.headers['x-amz-bypass-governance-retention'] ?? '').toLowerCase() === 'true';
  const method = req.method ?? 'GET';
  const answer = (xml?: string) => {
    res.writeHead(200, xml ? { 'Content-Type': 'application/xml', 'Content-Length': Buffer.byteLength(xml) } : { 'Content-Length': 0 });
    res.end(xml);
    return true;
  };
  const body = async () => (await readBoundedBody(req, 64 * 1024, () => new AwsServiceError('MalformedXML', 'The XML you provided was too large.'))).toString('utf8');
  if (object.subresource === 'retention') {
    if (method === 'PUT') {
      locks.putRetention(object.bucket, object.key, await body(), bypass);
      return answer();
    }
    return answer(locks.retentionXml(object.bucket, object.key));
  }
  if (object.subresource === 'legal-hold') {
    if (method === 'PUT') {
      locks.putLegalHold(object.bucket, object.key, await body());
      return answer();
    }
    return answer(locks.legalHoldXml(object.bucket, object.key));
  }
  if (object.subresource === undefined && (method === 'DELETE' || method === 'PUT')) locks.checkRemoval(object.bucket, object.key, bypass);
  return false;
}

/** Refuses (as the bucket policy does) a read of a scanned prefix's object whose scan tag is not the clean one. */
async function refuseUnscanned(direct: S3Client, object: { bucket: string; key: string }, refused: () => never): Promise<void> {
  if (!MALWARE_SCAN.objectPrefixes.some((prefix) => object.key.startsWith(prefix))) return;
  let tags: Array<{ Key?: string; Value?: string }>;
  try {
    tags = (await direct.send(new GetObjectTaggingCommand({ Bucket: object.bucket, Key: object.key }))).TagSet ?? [];
  } catch (error) {
    // A missing object is s3rver's to answer (and the gate's to turn into a 403 where S3 would).
    if ((error as Error).name === 'NoSuchKey' || (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return;
    throw error;
  }
  if (!tags.some((tag) => tag.Key === MALWARE_SCAN.tagKey && tag.Value === MALWARE_SCAN.cleanTagValue)) refused();
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
  if (!body) throw new AwsServiceError('EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size');
  const form = await readPostForm(body, req.headers).catch(() => undefined);
  if (!form) throw new AwsServiceError('MalformedPOSTRequest', 'The body of your POST request is not well-formed multipart/form-data.');
  const policy = form.fields.policy === undefined ? undefined : parsePolicy(form.fields.policy);
  if (!policy) throw form.fields.policy === undefined ? accessDenied() : new AwsServiceError('InvalidPolicyDocument', 'Invalid Policy: Invalid JSON.');
  const check = await options.verifier.verifyPostPolicy(form.fields, policy.expiration);
  if (!check.ok) throw check.refusal === 'expired' ? accessDenied('Invalid according to Policy: Policy expired.') : signatureRefusal(check.refusal);
  const bucketName = decodeURIComponent((req.url ?? '/').split('?', 1)[0]!.replace(/^\/|\/$/g, ''));
  const failure = policyFailure(form, policy, bucketName);
  if (failure) throw new AwsServiceError(failure.code, failure.message, failure.status);
  const grants = grantsOf(check.principal, options.functions);
  const requested: RequestedS3Action = { action: 'PutObject', bucket: options.resources[bucketName], key: form.fields.key ?? '' };
  if (grants && !bucketGrantsAllow(grants, requested)) refuse(options, check.principal, requested);
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

/** Logs the call its signer's grants do not allow and answers it as S3 does. */
function refuse(options: S3GateOptions, principal: Principal, refused: RequestedS3Action): never {
  logRefusal(options.log, 's3', principal, { action: refused.action, bucket: refused.bucket, ...(refused.key !== undefined ? { key: refused.key } : {}), ...(refused.prefix !== undefined ? { prefix: refused.prefix } : {}) });
  throw accessDenied();
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
  // Object Lock and tags are sub-resources, each its own action; bypassing governance retention is one more.
  const subresource = (['retention', 'legal-hold', 'tagging'] as const).find((name) => query.has(name));
  const bypass = String(headers['x-amz-bypass-governance-retention'] ?? '').toLowerCase() === 'true' ? [{ action: 'BypassGovernanceRetention', bucket, key }] : [];
  if (subresource) {
    const name = { retention: 'ObjectRetention', 'legal-hold': 'ObjectLegalHold', tagging: 'ObjectTagging' }[subresource];
    return [{ action: `${method === 'PUT' ? 'Put' : method === 'DELETE' ? 'Delete' : 'Get'}${name}`, bucket, key }, ...bypass];
  }
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
      return [{ action: query.has('uploadId') ? 'AbortMultipartUpload' : versioned ? 'DeleteObjectVersion' : 'DeleteObject', bucket, key }, ...bypass];
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

const accessDenied = (message = 'Access Denied'): AwsServiceError => new AwsServiceError('AccessDenied', message, 403);

/** As S3 answers a request whose signature does not hold. */
function signatureRefusal(refusal: SignatureRefusal): AwsServiceError {
  switch (refusal) {
    case 'unknown-key':
      return new AwsServiceError('InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.', 403);
    case 'mismatch':
      return new AwsServiceError('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.', 403);
    case 'skewed':
      return new AwsServiceError('RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.', 403);
    case 'expired':
      return accessDenied('Request has expired');
    case 'malformed':
    case 'missing':
      return accessDenied();
  }
}

/** S3's answers: an XML error document (none for a HEAD); the rest of the request is drained, not read. */
const S3_PROTOCOL: ServiceProtocol = {
  answer(req, res, error) {
    req.resume();
    const head = req.method === 'HEAD';
    const requestId = randomUUID();
    const text = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${error.type}</Code><Message>${error.message}</Message><RequestId>${requestId}</RequestId></Error>`;
    res.writeHead(error.status, { 'Content-Type': 'application/xml', 'x-amz-request-id': requestId, ...(head ? {} : { 'Content-Length': Buffer.byteLength(text) }) });
    res.end(head ? undefined : text);
  },
  internalError: new AwsServiceError('InternalError', 's3rver did not answer.', 502),
};
