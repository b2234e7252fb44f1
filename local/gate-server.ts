/**
 * The one server every local AWS endpoint runs on: the gates in front of
 * DynamoDB Local and s3rver, and the KMS, Secrets Manager and EventBridge
 * stand-ins (each a gate with its emulator in this process). It serves
 * loopback Host names only, answers a refusal (an AwsServiceError) in the
 * service's own wire shape, and anything else as the service's internal error,
 * logged. Who signed a call is checked by local/sigv4.ts, what a signer may do
 * by local/function-identity.ts, the same for every service.
 *
 * For a gate, `connectTo` passes calls on to the emulator behind it. A caller
 * that gives up (its SDK's timeout, the request deadline) closes its
 * connection; the call to the emulator is dropped with it, so no pooled
 * connection is left waiting on an answer nobody reads.
 */
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import type { GrantedResources } from './function-identity.ts';
import { isLoopbackHost, LOCAL_HOST } from './ports.ts';
import type { Principal } from './signing-credentials.ts';
import type { SignatureRefusal, SignatureVerifier } from './sigv4.ts';

export interface GateServer {
  readonly url: string;
  /** `host:port` of `url`. */
  readonly host: string;
  close(): Promise<void>;
}

export type Log = (line: Record<string, unknown>) => void;

/** How a service answers what it refuses, in its wire protocol. */
export interface ServiceProtocol {
  answer(req: IncomingMessage, res: ServerResponse, error: AwsServiceError): void;
  /** What the service answers when the endpoint itself fails (the emulator gone, a bug here). */
  readonly internalError: AwsServiceError;
}

/** What a gate is told at start: who may sign, what each function may do with which named resource, where refusals are logged. */
export interface GateOptions<Resource extends string, Grant> extends GrantedResources<Resource, Grant> {
  /** 0: a free one. */
  readonly port: number;
  readonly verifier: SignatureVerifier;
  readonly log: Log;
}

export async function startGateServer(options: {
  readonly name: string;
  /** 0: a free one. */
  readonly port: number;
  readonly protocol: ServiceProtocol;
  readonly log: Log;
  readonly handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /** Runs once the server has closed (a gate's connection to its emulator, a stand-in's pending writes). */
  readonly closed?: () => Promise<void> | void;
}): Promise<GateServer> {
  const { protocol } = options;
  const server = createServer((req, res) => {
    if (!isLoopbackHost(req.headers.host)) {
      req.resume();
      protocol.answer(req, res, new AwsServiceError('MisdirectedRequest', 'Only loopback Host names are served.', 421));
      return;
    }
    options.handle(req, res).catch((error: unknown) => {
      // The caller went away first: nobody is left to answer.
      if (res.destroyed) return;
      if (error instanceof AwsServiceError) return protocol.answer(req, res, error);
      options.log({ level: 'ERROR', message: `${options.name} failed`, error: error instanceof Error ? error.message : String(error) });
      if (res.headersSent) res.end();
      else protocol.answer(req, res, protocol.internalError);
    });
  });
  const url = await listenAt(server, LOCAL_HOST, options.port);
  return {
    url,
    host: new URL(url).host,
    async close() {
      await closeServer(server);
      await options.closed?.();
    },
  };
}

/** Sends the request on to the emulator (at `path`, or the path as sent), its body a buffer or the request itself (streamed), and gives the emulator's answer. */
export type PassOn = (req: IncomingMessage, res: ServerResponse, headers: IncomingHttpHeaders, body: Buffer | IncomingMessage, path?: string) => Promise<IncomingMessage>;

/** A gate's pooled connection to the emulator at `target`. */
export function connectTo(target: string): { readonly passOn: PassOn; close(): void } {
  const endpoint = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const passOn: PassOn = async (req, res, headers, body, path = req.url) => {
    const upstream = httpRequest({ agent, host: endpoint.hostname, port: endpoint.port, method: req.method, path, headers });
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    const answered = new Promise<IncomingMessage>((resolve, reject) => {
      upstream.once('response', resolve);
      upstream.once('error', reject);
    });
    // A failure while a streamed body is still being sent surfaces from its pipeline.
    answered.catch(() => undefined);
    if (Buffer.isBuffer(body)) upstream.end(body);
    else await pipeline(body, upstream);
    return answered;
  };
  return { passOn, close: () => agent.destroy() };
}

/** Answers with the emulator's answer, streamed. */
export async function relay(answer: IncomingMessage, res: ServerResponse): Promise<void> {
  res.writeHead(answer.statusCode ?? 502, answer.headers);
  await pipeline(answer, res);
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
