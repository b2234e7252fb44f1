import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import type { PostResult, WebhookPoster } from '#shared/domain/webhooks/ports.ts';
import type { HostResolver } from '#shared/domain/webhooks/url-rules.ts';
import { DELIVERY_TIMEOUT_MS } from '#shared/domain/webhooks/model.ts';

/** Every address a host name resolves to (A and AAAA), for the registration check. */
export const resolveHost: HostResolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/**
 * The delivery POST. The agents (request-filtering-agent) check the address
 * each connection is actually made to, after DNS, so a name that resolved to
 * a public address at registration and to a private one now is refused
 * (DNS rebinding). Only loopback may be allowed, and only by the local
 * runtime's configuration. Redirects are answers like any other: never followed.
 */
export function webhookPoster(options: { allowLoopback: boolean; timeoutMs?: number }): WebhookPoster {
  const filtering = { allowIPAddressList: options.allowLoopback ? ['127.0.0.0/8', '::1/128'] : [], keepAlive: true, maxSockets: 16 };
  const agents = { http: new RequestFilteringHttpAgent(filtering), https: new RequestFilteringHttpsAgent(filtering) };
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  return (request) =>
    new Promise<PostResult>((resolve) => {
      const started = performance.now();
      const url = new URL(request.url);
      const secure = url.protocol === 'https:';
      let connected = false;
      const done = (result: Omit<PostResult, 'durationMs'>) => resolve({ ...result, durationMs: performance.now() - started });
      const outgoing = (secure ? https : http).request(url, { method: 'POST', agent: secure ? agents.https : agents.http, headers: { ...request.headers, 'content-length': Buffer.byteLength(request.body) } }, (response) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        response.on('data', (chunk: Buffer) => {
          if (kept < 1024) {
            chunks.push(chunk);
            kept += chunk.length;
          }
        });
        response.on('end', () => {
          clearTimeout(timer);
          const status = response.statusCode ?? 0;
          done({ statusCode: status, outcome: status >= 200 && status < 300 ? 'delivered' : 'failed', excerpt: Buffer.concat(chunks).subarray(0, 1024).toString('utf8') });
        });
        response.on('error', () => {
          clearTimeout(timer);
          done({ statusCode: response.statusCode, outcome: 'failed' });
        });
      });
      const timer = setTimeout(() => {
        outgoing.destroy(new Error('timeout'));
        done({ outcome: 'timeout' });
      }, timeoutMs);
      outgoing.on('socket', (socket) => {
        // A kept-alive socket is connected already; a new one says so when it is.
        if (!socket.connecting) connected = true;
        else socket.once('connect', () => (connected = true));
      });
      outgoing.on('error', () => {
        clearTimeout(timer);
        done({ outcome: connected ? 'failed' : 'refused' });
      });
      outgoing.end(request.body);
    });
}
