/**
 * AWS Signature Version 4, checked as the services check it, for the local
 * endpoints that hold data: a request signed in its Authorization header, a
 * presigned URL (query string), and the policy of a presigned POST form. The
 * signature is recomputed with the SDK's own signer (`@smithy/signature-v4`)
 * from what the request carries and the secret of the access key id it names
 * (local/signing-credentials.ts), and compared in constant time. A header
 * signature more than 15 minutes from now, or a presigned URL past its expiry,
 * is refused as AWS refuses it.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';
import type { Checksum, HttpRequest, QueryParameterBag } from '@smithy/types';
import type { LocalSigningCredentials, Principal } from './signing-credentials.ts';

/** How far a signed request's date may be from the clock, either way (AWS's own allowance). */
export const MAX_CLOCK_SKEW_MS = 15 * 60 * 1000;
/** The longest a presigned URL may be valid (seven days, as SigV4 allows). */
const MAX_PRESIGNED_EXPIRY_SECONDS = 7 * 24 * 60 * 60;
const ALGORITHM = 'AWS4-HMAC-SHA256';
const CONTENT_SHA256 = 'x-amz-content-sha256';

/** Why a request was refused, for the endpoint to answer in its service's own words. */
export type SignatureRefusal =
  | 'missing' // no signature at all: an anonymous request
  | 'malformed' // a signature whose parts cannot be read
  | 'unknown-key' // an access key id the runtime never issued
  | 'mismatch' // the signature is not the one its key makes for this request
  | 'skewed' // the signing date is more than 15 minutes from now
  | 'expired'; // a presigned URL or POST policy past its expiry

export type SignatureCheck = { readonly ok: true; readonly principal: Principal } | { readonly ok: false; readonly refusal: SignatureRefusal };

export interface SignedRequest {
  readonly method: string;
  /** The path and query exactly as sent (`req.url`). */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The body, when the endpoint reads it whole; a streamed body is covered by its x-amz-content-sha256 header. */
  readonly body?: Buffer;
}

export interface SignatureVerifier {
  /** Checks a request's header or query-string signature for `service` (its signing name: s3, kms, dynamodb, ...). */
  verifyRequest(request: SignedRequest, service: string): Promise<SignatureCheck>;
  /** Checks a presigned POST form's policy signature (`x-amz-*` fields, lower-cased names) and the policy's expiration. */
  verifyPostPolicy(fields: Readonly<Record<string, string>>, expiration: Date): Promise<SignatureCheck>;
}

export function signatureVerifier(credentials: LocalSigningCredentials, now: () => Date = () => new Date()): SignatureVerifier {
  return {
    async verifyRequest(request, service) {
      const query = parseQuery(request.url);
      if (query === undefined) return refuse('malformed');
      const hasHeader = request.headers.authorization !== undefined;
      const hasQuery = query['X-Amz-Signature'] !== undefined || query['X-Amz-Algorithm'] !== undefined;
      if (!hasHeader && !hasQuery) return refuse('missing');
      if (hasHeader && hasQuery) return refuse('malformed');
      const parsed = hasHeader ? parseAuthorizationHeader(request.headers) : parsePresignedQuery(query);
      if (!parsed) return refuse('malformed');
      const scope = parseScope(parsed.credential, parsed.date, service);
      if (!scope) return refuse('malformed');
      const known = credentials.lookup(scope.accessKeyId);
      if (!known) return refuse('unknown-key');
      const late = now().getTime() - scope.signingDate.getTime();
      if (parsed.expiresInSeconds === undefined ? Math.abs(late) > MAX_CLOCK_SKEW_MS : late < -MAX_CLOCK_SKEW_MS) return refuse('skewed');
      if (parsed.expiresInSeconds !== undefined && late > parsed.expiresInSeconds * 1000) return refuse('expired');
      const expected = await expectedSignature(request, query, parsed, scope, known.secretAccessKey, service);
      if (expected === undefined) return refuse('mismatch');
      return sameSignature(expected, parsed.signature) ? { ok: true, principal: known.principal } : refuse('mismatch');
    },

    async verifyPostPolicy(fields, expiration) {
      const { 'x-amz-algorithm': algorithm, 'x-amz-credential': credential, 'x-amz-date': date, 'x-amz-signature': signature, policy } = fields;
      if (algorithm === undefined && credential === undefined && signature === undefined) return refuse('missing');
      if (algorithm !== ALGORITHM || !credential || !date || !signature || !policy) return refuse('malformed');
      const scope = parseScope(credential, date, 's3');
      if (!scope) return refuse('malformed');
      const known = credentials.lookup(scope.accessKeyId);
      if (!known) return refuse('unknown-key');
      const signer = signerFor(scope, known.secretAccessKey, 's3');
      const expected = await signer.sign(policy, { signingDate: scope.signingDate, signingRegion: scope.region, signingService: 's3' });
      if (!sameSignature(expected, signature)) return refuse('mismatch');
      // Checked once the signature holds, so an unsigned caller learns nothing from the answer.
      return now().getTime() > expiration.getTime() ? refuse('expired') : { ok: true, principal: known.principal };
    },
  };
}

const refuse = (refusal: SignatureRefusal): SignatureCheck => ({ ok: false, refusal });

interface ParsedSignature {
  credential: string;
  date: string;
  signedHeaders: string[];
  signature: string;
  /** Presigned only. */
  expiresInSeconds?: number;
}

interface Scope {
  accessKeyId: string;
  region: string;
  signingDate: Date;
}

/** `AWS4-HMAC-SHA256 Credential=<key>/<scope>, SignedHeaders=a;b, Signature=<hex>`, dated by X-Amz-Date. */
function parseAuthorizationHeader(headers: IncomingHttpHeaders): ParsedSignature | undefined {
  const match = /^AWS4-HMAC-SHA256 (.+)$/.exec(headers.authorization ?? '');
  const date = headers['x-amz-date'];
  if (!match?.[1] || typeof date !== 'string') return undefined;
  const parts = Object.fromEntries(match[1].split(',').map((part) => part.trim().split('=', 2) as [string, string?]));
  const { Credential: credential, SignedHeaders: signedHeaders, Signature: signature } = parts;
  if (!credential || !signedHeaders || !signature) return undefined;
  return { credential, date, signedHeaders: signedHeaders.split(';'), signature };
}

function parsePresignedQuery(query: QueryParameterBag): ParsedSignature | undefined {
  const one = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : undefined);
  const [algorithm, credential, date, signedHeaders, signature, expires] = ['X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Date', 'X-Amz-SignedHeaders', 'X-Amz-Signature', 'X-Amz-Expires'].map(one);
  const expiresInSeconds = Number(expires);
  if (algorithm !== ALGORITHM || !credential || !date || !signedHeaders || !signature) return undefined;
  if (!Number.isInteger(expiresInSeconds) || expiresInSeconds < 1 || expiresInSeconds > MAX_PRESIGNED_EXPIRY_SECONDS) return undefined;
  return { credential, date, signedHeaders: signedHeaders.split(';'), signature, expiresInSeconds };
}

/** `<access key id>/<yyyymmdd>/<region>/<service>/aws4_request`, its day that of `date` (`yyyymmddThhmmssZ`). */
function parseScope(credential: string, date: string, service: string): Scope | undefined {
  const [accessKeyId, day, region, scopeService, terminator, ...rest] = credential.split('/');
  const time = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(date);
  if (!accessKeyId || !region || rest.length > 0 || terminator !== 'aws4_request' || scopeService !== service || !time || day !== date.slice(0, 8)) return undefined;
  const [, year, month, dayOfMonth, hours, minutes, seconds] = time.map(Number) as number[];
  const signingDate = new Date(Date.UTC(year!, month! - 1, dayOfMonth, hours, minutes, seconds));
  return Number.isNaN(signingDate.getTime()) ? undefined : { accessKeyId, region, signingDate };
}

/** The signature the key makes for this request as it arrived (only its signed headers), or undefined when a signed header is absent. */
async function expectedSignature(request: SignedRequest, query: QueryParameterBag, parsed: ParsedSignature, scope: Scope, secret: string, service: string): Promise<string | undefined> {
  const headers: Record<string, string> = {};
  for (const name of parsed.signedHeaders) {
    const value = request.headers[name];
    if (value === undefined) return undefined;
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const declaredHash = request.headers[CONTENT_SHA256];
  if (typeof declaredHash === 'string') {
    // The signature covers the declared hash; a body read whole must have it (an unsigned payload is S3's alone, for bodies it streams).
    if (request.body && createHash('sha256').update(request.body).digest('hex') !== declaredHash) return undefined;
    headers[CONTENT_SHA256] = declaredHash;
  } else if (!request.body && request.method !== 'GET' && request.method !== 'HEAD' && parsed.expiresInSeconds === undefined) {
    // A streamed body that declares no hash cannot be checked.
    return undefined;
  } else if (parsed.expiresInSeconds !== undefined && service === 's3') {
    headers[CONTENT_SHA256] = 'UNSIGNED-PAYLOAD';
  }
  const path = request.url.split('?', 1)[0] ?? '/';
  const unsigned = new Set(parsed.signedHeaders.includes(CONTENT_SHA256) ? [] : [CONTENT_SHA256]);
  const toSign: HttpRequest = { method: request.method, protocol: 'http:', hostname: '', path, query, headers, body: request.body };
  const signer = signerFor(scope, secret, service);
  const options = { signingDate: scope.signingDate, signableHeaders: new Set(parsed.signedHeaders), unsignableHeaders: unsigned };
  if (parsed.expiresInSeconds === undefined) {
    const signed = await signer.sign(toSign, options);
    return /Signature=([0-9a-f]+)/.exec(String(signed.headers.authorization))?.[1];
  }
  const presigned = await signer.presign(toSign, { ...options, expiresIn: parsed.expiresInSeconds, unhoistableHeaders: new Set([...parsed.signedHeaders, CONTENT_SHA256]) });
  return String(presigned.query?.['X-Amz-Signature']);
}

/**
 * Signs a request in its Authorization header with `credential`, its body
 * unsigned (the gates re-sign what they pass on to the emulator behind them,
 * whose own key is not the caller's). Gives the headers to send.
 */
export async function signHeaders(
  credential: { accessKeyId: string; secretAccessKey: string },
  request: { method: string; path: string; query: QueryParameterBag; headers: Record<string, string> },
  service: string,
): Promise<Record<string, string>> {
  const signingDate = new Date();
  const scope = { accessKeyId: credential.accessKeyId, region: 'us-east-1', signingDate };
  const headers = { ...request.headers, [CONTENT_SHA256]: request.headers[CONTENT_SHA256] ?? 'UNSIGNED-PAYLOAD' };
  const signed = await signerFor(scope, credential.secretAccessKey, service).sign(
    { method: request.method, protocol: 'http:', hostname: '', path: request.path, query: request.query, headers },
    { signingDate, signableHeaders: new Set(['host', 'x-amz-date', CONTENT_SHA256]), unsignableHeaders: new Set(Object.keys(headers).filter((name) => !['host', CONTENT_SHA256].includes(name))) },
  );
  return signed.headers;
}

function signerFor(scope: Scope, secretAccessKey: string, service: string): SignatureV4 {
  return new SignatureV4({
    credentials: { accessKeyId: scope.accessKeyId, secretAccessKey },
    region: scope.region,
    service,
    sha256: NodeSha256,
    // S3 signs the path as sent; the other services sign it encoded once more.
    uriEscapePath: service !== 's3',
    // Only what the request itself carries is signed.
    applyChecksum: false,
  });
}

function sameSignature(expected: string, presented: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The query string as the signer reads it: each name and value percent-decoded
 * (a `+` stays a plus, as SigV4 reads it), a repeated name a list. Undefined
 * when a part is not valid percent-encoding.
 */
export function parseQuery(url: string): QueryParameterBag | undefined {
  const at = url.indexOf('?');
  const query: QueryParameterBag = {};
  if (at < 0) return query;
  try {
    for (const pair of url.slice(at + 1).split('&')) {
      if (pair === '') continue;
      const equals = pair.indexOf('=');
      const name = decodeURIComponent(equals < 0 ? pair : pair.slice(0, equals));
      const value = equals < 0 ? '' : decodeURIComponent(pair.slice(equals + 1));
      const existing = query[name];
      query[name] = existing === undefined || existing === null ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
    }
  } catch {
    return undefined;
  }
  return query;
}

/** SHA-256 and HMAC-SHA-256 from node:crypto, shaped as the signer's checksum. */
export class NodeSha256 implements Checksum {
  private hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', toBuffer(secret));
  }
  update(data: Uint8Array | string): void {
    this.hash.update(typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
  reset(): void {
    throw new Error('not used by the signer');
  }
}

function toBuffer(data: string | ArrayBuffer | ArrayBufferView): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}
