/**
 * What the stand-ins of AWS JSON 1.1 services share (KMS, Secrets Manager,
 * EventBridge): each is a gate (local/gate-server.ts) whose emulator is its
 * table of operations, in this process. A call is signed (checked before
 * anything else, as AWS does), names one of the operations in `X-Amz-Target`
 * and carries a JSON object; the answer and every error are in the
 * protocol's shape, whose SDK clients map `x-amzn-ErrorType` to their
 * exception classes.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GateServer, Log, ServiceProtocol } from './gate-server.ts';
import { AwsServiceError, readBoundedBody, requireSignature, startGateServer } from './gate-server.ts';
import type { Principal } from './signing-credentials.ts';
import type { SignatureVerifier } from './sigv4.ts';

const AWS_JSON_CONTENT_TYPE = 'application/x-amz-json-1.1';

/** An AWS JSON 1.1 answer: the payload, a request id, and for an error its type, as the SDK reads it. */
function sendAwsJson(res: ServerResponse, status: number, payload: Record<string, unknown>, errorType?: string): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(payload);
  const headers: Record<string, string | number> = {
    'Content-Type': AWS_JSON_CONTENT_TYPE,
    'Content-Length': Buffer.byteLength(text),
    'x-amzn-RequestId': randomUUID(),
  };
  if (errorType) headers['x-amzn-ErrorType'] = errorType;
  // An oversized body may still be arriving; closing is cheaper than draining it.
  if (status === 413) headers.Connection = 'close';
  res.writeHead(status, headers);
  res.end(text);
}

/** The largest request body a stand-in of an AWS JSON service reads. */
const MAX_AWS_JSON_BODY_BYTES = 1024 * 1024;

/**
 * One AWS JSON 1.1 request: who signed it (SigV4 for the service's
 * `signingName`), the operation `X-Amz-Target` names
 * (`<targetPrefix>.<Operation>`, one of `operations`) and its JSON object
 * body, or the AwsServiceError the service answers.
 */
async function readAwsJsonRequest<Name extends string>(
  req: IncomingMessage,
  service: AwsJsonService & { verifier: SignatureVerifier; operations: ReadonlyMap<Name, unknown> },
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

/** An AWS JSON 1.1 service as its SDK client addresses it. */
export interface AwsJsonService {
  /** The SigV4 signing name. */
  readonly signingName: string;
  /** What `X-Amz-Target` names the service as. */
  readonly targetPrefix: string;
  /** The service's exception type for a method or target it does not serve. */
  readonly unknownOperation: string;
  /** The service's own internal error, answered for a failure of the stand-in. */
  readonly internalError: { readonly type: string; readonly message: string };
}

export type Body = Record<string, unknown>;
/** One operation: the request's JSON body (and who signed it, and the operation's name) to the answer's. */
export type AwsJsonOperation<Name extends string> = (body: Body, call: { readonly principal: Principal; readonly operation: Name }) => Promise<Body> | Body;

export function awsJsonProtocol(internalError: AwsJsonService['internalError']): ServiceProtocol {
  return {
    answer: (_req, res, error) => sendAwsJson(res, error.status, { __type: error.type, message: error.message }, error.type),
    internalError: new AwsServiceError(internalError.type, internalError.message, 500),
  };
}

/**
 * Serves `operations` as `service` answers them. `extension` may answer a
 * request first (the stand-in's own, never the service's: call counters).
 */
export function startAwsJsonStandin<Name extends string>(options: {
  readonly name: string;
  /** 0: a free one. */
  readonly port: number;
  readonly service: AwsJsonService;
  readonly verifier: SignatureVerifier;
  readonly log: Log;
  readonly operations: ReadonlyMap<Name, AwsJsonOperation<Name>>;
  readonly extension?: (req: IncomingMessage, res: ServerResponse) => boolean;
  readonly closed?: () => Promise<void>;
}): Promise<GateServer> {
  const { service, operations } = options;
  return startGateServer({
    name: `${options.name} stand-in`,
    port: options.port,
    protocol: awsJsonProtocol(service.internalError),
    log: options.log,
    closed: options.closed,
    async handle(req, res) {
      if (options.extension?.(req, res)) return;
      const { principal, operationName, body } = await readAwsJsonRequest(req, { ...service, verifier: options.verifier, operations });
      sendAwsJson(res, 200, await operations.get(operationName)!(body, { principal, operation: operationName }));
    },
  });
}
