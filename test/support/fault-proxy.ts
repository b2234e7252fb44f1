import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Where a fault strikes, relative to the dependency doing the work:
 * `before` the request reaches it (nothing happens there), or `after` it has
 * processed the request (the effect happened; only the answer is lost).
 * A stall holds the connection open and silent; a drop resets it.
 */
export type Fault = 'stall-before' | 'stall-after' | 'drop-before' | 'drop-after';

export interface FaultRule {
  fault: Fault;
  /** Which requests it strikes, e.g. `({ target }) => target?.endsWith('.TransactWriteItems')`. */
  match: (request: { method: string; path: string; target: string | undefined }) => boolean;
}

export interface FaultProxy {
  url: string;
  /** The fault for requests from now on (undefined: pass everything). */
  set(rule: FaultRule | undefined): void;
  /** Requests the current rule struck. */
  struck: number;
  close(): Promise<void>;
}

/**
 * A loopback HTTP proxy between the handlers and one local dependency
 * (DynamoDB Local, s3rver, the KMS or PayPal stand-in). Requests pass
 * byte-for-byte (Host and signatures unchanged) unless the current rule
 * matches; then it stalls or drops them before or after the upstream
 * processed them. Real sockets, real timeouts: the SDK's own timeout and
 * retry code is what gets exercised.
 */
export async function startFaultProxy(upstream: string): Promise<FaultProxy> {
  const target = new URL(upstream);
  const agent = new http.Agent({ keepAlive: true });
  let rule: FaultRule | undefined;
  const proxy = {
    struck: 0,
    url: '',
    set(next: FaultRule | undefined) {
      rule = next;
      proxy.struck = 0;
    },
    close: async () => {
      server.closeAllConnections();
      agent.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const header = req.headers['x-amz-target'];
      const active = rule?.match({ method: req.method ?? 'GET', path: req.url ?? '/', target: typeof header === 'string' ? header : undefined }) ? rule : undefined;
      if (active) proxy.struck += 1;
      if (active?.fault === 'stall-before') return; // never forwarded, never answered: the client's timeout decides
      if (active?.fault === 'drop-before') return req.socket.destroy();
      const forwarded = http.request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent },
        (upstreamResponse) => {
          const body: Buffer[] = [];
          upstreamResponse.on('data', (chunk: Buffer) => body.push(chunk));
          upstreamResponse.on('end', () => {
            if (active?.fault === 'stall-after') return; // processed upstream; the answer never comes
            if (active?.fault === 'drop-after') return req.socket.destroy();
            res.writeHead(upstreamResponse.statusCode ?? 502, upstreamResponse.headers);
            res.end(Buffer.concat(body));
          });
        },
      );
      forwarded.on('error', () => req.socket.destroy());
      forwarded.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}

/** The dependencies a handler calls, and the variable that names each one's endpoint. */
export type Dependency = 'dynamodb' | 's3' | 'kms' | 'paypal';
const ENDPOINT_VARIABLES: Record<Dependency, string> = {
  dynamodb: 'AWS_ENDPOINT_URL_DYNAMODB',
  s3: 'AWS_ENDPOINT_URL_S3',
  kms: 'AWS_ENDPOINT_URL_KMS',
  paypal: 'PAYPAL_API_URL',
};

/**
 * A fault proxy in front of each dependency this process's handlers call (its
 * endpoint variable now names the proxy); `restore` closes them and puts the
 * variables back. Call it after the runtime's environment is applied.
 */
export async function proxyDependencies(): Promise<{ proxies: Record<Dependency, FaultProxy>; restore(): Promise<void> }> {
  const proxies = {} as Record<Dependency, FaultProxy>;
  const saved: Record<string, string | undefined> = {};
  for (const dependency of Object.keys(ENDPOINT_VARIABLES) as Dependency[]) {
    const variable = ENDPOINT_VARIABLES[dependency];
    saved[variable] = process.env[variable];
    proxies[dependency] = await startFaultProxy(process.env[variable] as string);
    process.env[variable] = proxies[dependency].url;
  }
  return {
    proxies,
    async restore() {
      for (const proxy of Object.values(proxies)) await proxy.close();
      Object.assign(process.env, saved);
    },
  };
}
