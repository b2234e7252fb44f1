/**
 * What the local gates in front of DynamoDB Local and s3rver share: a server
 * whose `handle` answers a request itself (a refusal) or passes it on to the
 * emulator behind it, and the passing on. A caller that gives up (its SDK's
 * timeout, the request deadline) closes its connection; the call to the
 * emulator is dropped with it, so no pooled connection is left waiting on an
 * answer nobody reads.
 */
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { closeServer, listenAt } from './standin-http.ts';
import { isLoopbackHost, LOCAL_HOST } from './ports.ts';

export interface GateServer {
  readonly url: string;
  /** `host:port` of `url`. */
  readonly host: string;
  close(): Promise<void>;
}

/** Sends the request on to the emulator (at `path`, or the path as sent), its body a buffer or the request itself (streamed), and gives the emulator's answer. */
export type PassOn = (req: IncomingMessage, res: ServerResponse, headers: IncomingHttpHeaders, body: Buffer | IncomingMessage, path?: string) => Promise<IncomingMessage>;

export async function startGateServer(options: {
  readonly name: string;
  /** 0: a free one. */
  readonly port: number;
  /** The emulator's endpoint. */
  readonly target: string;
  readonly log: (line: Record<string, unknown>) => void;
  readonly handle: (req: IncomingMessage, res: ServerResponse, passOn: PassOn) => Promise<void>;
}): Promise<GateServer> {
  const target = new URL(options.target);
  const agent = new Agent({ keepAlive: true });

  const passOn: PassOn = async (req, res, headers, body, path = req.url) => {
    const upstream = httpRequest({ agent, host: target.hostname, port: target.port, method: req.method, path, headers });
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

  const server = createServer((req, res) => {
    if (!isLoopbackHost(req.headers.host)) return misdirected(req, res);
    options.handle(req, res, passOn).catch((error: unknown) => {
      // The caller went away first: nobody is left to answer.
      if (res.destroyed) return;
      options.log({ level: 'ERROR', message: `${options.name} failed`, error: error instanceof Error ? error.message : String(error) });
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
  });
  const url = await listenAt(server, LOCAL_HOST, options.port);
  return {
    url,
    host: new URL(url).host,
    async close() {
      await closeServer(server);
      agent.destroy();
    },
  };
}

/** A request that names this machine by a name that is not loopback's is not for this server (421). */
export function misdirected(req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  res.writeHead(421, { 'Content-Type': 'text/plain', Connection: 'close' }).end('Misdirected Request: only loopback Host names are served\n');
}

/** Answers with the emulator's answer, streamed. */
export async function relay(answer: IncomingMessage, res: ServerResponse): Promise<void> {
  res.writeHead(answer.statusCode ?? 502, answer.headers);
  await pipeline(answer, res);
}
