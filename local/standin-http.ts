/**
 * What the local stand-ins' HTTP servers share: reading a request body up to a
 * bound, and answering in the AWS JSON 1.1 protocol's shape (KMS, Secrets
 * Manager), whose SDK clients map `x-amzn-ErrorType` to their exception classes.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isLoopbackHost } from './ports.ts';
import type { Principal } from './signing-credentials.ts';
import type { SignatureRefusal, SignatureVerifier } from './sigv4.ts';

/** The request body, refused with `tooLarge()` once past `maxBytes` (declared or sent); the rest is drained, not buffered. */
export function readBoundedBody(req: IncomingMessage, maxBytes: number, tooLarge: () => Error): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (Number(req.headers['content-length'] ?? 0) > maxBytes) {
      req.resume();
      reject(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    req.on('data', (chunk: Buffer) => {
      if (settled) return; // keep draining, but stop buffering
      size += chunk.length;
      if (size > maxBytes) {
        settled = true;
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks));
    });
    req.on('error', (error) => {
      if (settled) return;
      settled = true;
      reject(error);
    });
  });
}

const AWS_JSON_CONTENT_TYPE = 'application/x-amz-json-1.1';

/** An AWS JSON 1.1 answer: the payload, the request id, and for an error its type, as the SDK reads it. */
export function sendAwsJson(res: ServerResponse, status: number, requestId: string, payload: Record<string, unknown>, errorType?: string): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(payload);
  const headers: Record<string, string | number> = {
    'Content-Type': AWS_JSON_CONTENT_TYPE,
    'Content-Length': Buffer.byteLength(text),
    'x-amzn-RequestId': requestId,
  };
  if (errorType) headers['x-amzn-ErrorType'] = errorType;
  // An oversized body may still be arriving; closing is cheaper than draining it.
  if (status === 413) headers.Connection = 'close';
  res.writeHead(status, headers);
  res.end(text);
}

/** An error of the emulated AWS service, answered in its protocol: `type` is the exception the SDK throws. */
export class AwsServiceError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/**
 * An AWS JSON 1.1 server: `handle` answers each request (sendAwsJson), an
 * AwsServiceError it throws is answered in the protocol's shape, and anything
 * else is a bug of the stand-in, answered as the service answers its own
 * (`internal`: the exception type and message).
 */
export function awsJsonServer(name: string, internal: { type: string; message: string }, handle: (req: IncomingMessage, res: ServerResponse, requestId: string) => Promise<void>): Server {
  return createServer((req, res) => {
    const requestId = randomUUID();
    if (!isLoopbackHost(req.headers.host)) {
      req.resume();
      sendAwsJson(res, 421, requestId, { __type: 'MisdirectedRequest', message: 'Only loopback Host names are served.' }, 'MisdirectedRequest');
      return;
    }
    handle(req, res, requestId).catch((error: unknown) => {
      if (error instanceof AwsServiceError) {
        sendAwsJson(res, error.status, requestId, { __type: error.type, message: error.message }, error.type);
        return;
      }
      console.error(`${name} stand-in internal error`, error);
      sendAwsJson(res, 500, requestId, { __type: internal.type, message: internal.message }, internal.type);
    });
  });
}

/** Listens on `host:port` (port 0: a free one) and gives the server's base URL. */
export async function listenAt(server: Server, host: string, port: number): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port: bound } = server.address() as AddressInfo;
  return `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
}

/** Stops the server, its clients' keep-alive connections too (SDK clients and fetch hold them, which would keep close() waiting). */
export async function closeServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  server.closeAllConnections();
  await closed;
}

/**
 * As the AWS JSON services answer a request whose signature does not hold (a
 * stale date is refused as an expired signature). DynamoDB (JSON 1.0) names
 * the types with their `com.amazon.coral.service#` namespace; the SDK reads
 * either form.
 */
export function signatureError(refusal: SignatureRefusal): AwsServiceError {
  switch (refusal) {
    case 'missing':
      return new AwsServiceError('MissingAuthenticationTokenException', 'Missing Authentication Token');
    case 'malformed':
      return new AwsServiceError('IncompleteSignatureException', 'The request signature does not conform to AWS standards.');
    case 'unknown-key':
      return new AwsServiceError('UnrecognizedClientException', 'The security token included in the request is invalid.');
    case 'mismatch':
      return new AwsServiceError('InvalidSignatureException', 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.');
    case 'skewed':
    case 'expired':
      return new AwsServiceError('InvalidSignatureException', 'Signature expired: the signing date is more than 15 minutes from the current time.');
  }
}

/** Who signed a request whose body was read whole, or the error its service answers (signatureError). */
export async function requireSignature(verifier: SignatureVerifier, req: IncomingMessage, body: Buffer, signingName: string): Promise<Principal> {
  const check = await verifier.verifyRequest({ method: req.method ?? 'POST', url: req.url ?? '/', headers: req.headers, body }, signingName);
  if (!check.ok) throw signatureError(check.refusal);
  return check.principal;
}

/** The largest request body a stand-in of an AWS JSON service reads. */
const MAX_AWS_JSON_BODY_BYTES = 1024 * 1024;

/**
 * One AWS JSON 1.1 request: who signed it (SigV4 for the service's
 * `signingName`, checked before anything else, as AWS does), the operation
 * `X-Amz-Target` names (`<targetPrefix>.<Operation>`, one of `operations`)
 * and its JSON object body, or the AwsServiceError the service answers
 * (`unknownOperation`: the service's own exception type for a method or
 * target it does not serve).
 */
export async function readAwsJsonRequest<Name extends string>(
  req: IncomingMessage,
  service: { signingName: string; verifier: SignatureVerifier; targetPrefix: string; unknownOperation: string; operations: ReadonlyMap<Name, unknown> },
): Promise<{ principal: Principal; operationName: Name; body: Record<string, unknown> }> {
  if (req.method !== 'POST') {
    req.resume();
    throw new AwsServiceError(service.unknownOperation, 'Only POST requests are supported.', 405);
  }
  const raw = await readBoundedBody(req, MAX_AWS_JSON_BODY_BYTES, () => new AwsServiceError('ValidationException', `Request body exceeds ${MAX_AWS_JSON_BODY_BYTES} bytes.`, 413));
  const principal = await requireSignature(service.verifier, req, raw, service.signingName);
  const targetHeader = req.headers['x-amz-target'];
  const target = Array.isArray(targetHeader) ? targetHeader[0] : targetHeader;
  const [prefix, operationName] = (target ?? '').split('.');
  if (prefix !== service.targetPrefix || operationName === undefined || !service.operations.has(operationName as Name)) {
    throw new AwsServiceError(service.unknownOperation, `Unsupported operation ${target ?? '(missing X-Amz-Target)'}.`);
  }
  let body: unknown = {};
  const text = raw.toString('utf8').trim();
  if (text.length > 0) {
    try {
      body = JSON.parse(text);
    } catch {
      throw new AwsServiceError('SerializationException', 'The request body is not valid JSON.');
    }
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new AwsServiceError('SerializationException', 'The request body must be a JSON object.');
  return { principal, operationName: operationName as Name, body: body as Record<string, unknown> };
}
