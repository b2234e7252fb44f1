import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Delivery {
  readonly headers: http.IncomingHttpHeaders;
  /** The raw body, as signed. */
  readonly body: string;
  readonly at: number;
  readonly json: { type: string; timestamp: string; data: Record<string, unknown> };
}

/** What the receiver answers each request with (status, body, delay), by call. */
export type Reply = (delivery: Delivery, index: number) => { status: number; body?: string; delayMs?: number } | 'hang';

/** A webhook receiver on loopback (node:http) that records every POST and answers as told. */
export async function startReceiver(reply: Reply = () => ({ status: 200, body: 'ok' })) {
  const deliveries: Delivery[] = [];
  const waiters = new Set<() => void>();
  let answer = reply;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const delivery: Delivery = { headers: req.headers, body, at: Date.now(), json: JSON.parse(body) as Delivery['json'] };
      deliveries.push(delivery);
      for (const waiter of [...waiters]) waiter();
      const outcome = answer(delivery, deliveries.length - 1);
      if (outcome === 'hang') return;
      setTimeout(() => res.writeHead(outcome.status, { 'Content-Type': 'text/plain' }).end(outcome.body ?? ''), outcome.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    deliveries,
    answerWith(next: Reply) {
      answer = next;
    },
    /** Resolves with the deliveries once `count` match (or throws after `timeoutMs`). */
    async waitFor(match: (delivery: Delivery) => boolean, count = 1, timeoutMs = 30_000): Promise<Delivery[]> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = deliveries.filter(match);
        if (found.length >= count) return found;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`only ${found.length} of ${count} deliveries arrived in ${timeoutMs} ms (${deliveries.length} in all)`);
        await new Promise<void>((resolve) => {
          const done = () => {
            waiters.delete(done);
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(done, Math.min(left, 500));
          waiters.add(done);
        });
      }
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
