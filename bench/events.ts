/**
 * Domain events benchmark: `npm run bench:events`.
 *
 * Starts the local runtime in this process and makes BENCH_CHANGES committed
 * changes (default 60: paymethod creates, updates and deletes in turn, one at
 * a time). For each, the clock starts when the API's answer arrives (the
 * write committed before it was sent) and stops when the change's event line
 * is in `.local/events-<port>.jsonl`. Prints the median and p99 of that delay,
 * and what the publisher did (stream records read, events per PutEvents call).
 * The delay is the local stream poller's (DynamoDB Local, idle poll 100 ms)
 * plus the handler and the stand-in's append, not Lambda's.
 */
import { open } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { startLocalRuntime } from '#local/runtime.ts';
import { recordRun } from './results.ts';
import { median } from './support.ts';

const CHANGES = Number(process.env.BENCH_CHANGES ?? 60);
const ORG = 'org_bench';
const LOC = 'loc_bench';
const CARD = { card_type: 'visa', name_on_card: 'Bench Card', account_number: '4111111111111111', expire_month: 12, expire_year: 2031 };

const runtime = await startLocalRuntime({
  port: 0,
  seed: { organizations: [{ organization_id: ORG, credentials: [{ api_access_id: 'bench-id', api_secure_key: 'bench-key' }] }] },
});
const headers = {
  Authorization: `Basic ${Buffer.from('bench-id:bench-key').toString('base64')}`,
  'X-Service-Auth-Organization-Id': ORG,
  'Content-Type': 'application/json',
};
const base = `/v3/organizations/${ORG}/locations/${LOC}`;

async function api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${runtime.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const answer = (await response.json()) as Record<string, unknown>;
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

/** Follows the events file: lines as they are appended. */
const file = await open(runtime.eventsFile, 'r');
let offset = 0;
let carry = '';
const seen: Array<{ type: string; token: unknown }> = [];
async function readNewLines(): Promise<void> {
  const { size } = await file.stat();
  if (size <= offset) return;
  const buffer = Buffer.alloc(size - offset);
  await file.read(buffer, 0, buffer.length, offset);
  offset = size;
  const text = carry + buffer.toString('utf8');
  const lines = text.split('\n');
  carry = lines.pop() ?? '';
  for (const line of lines) {
    const event = JSON.parse(line) as { 'detail-type': string; detail: { paymethod_token?: unknown } };
    seen.push({ type: event['detail-type'], token: event.detail.paymethod_token });
  }
}
async function awaitLine(type: string, token: unknown): Promise<void> {
  for (let reads = 0; reads < 20_000; reads += 1) {
    await readNewLines();
    if (seen.some((event) => event.type === type && event.token === token)) return;
    await sleep(1);
  }
  throw new Error(`no ${type} event for ${String(token)}`);
}

const WARM_UP = 3;
const delays: number[] = [];
let token: unknown;
try {
  // The first changes load the publisher's module (its cold start): not measured.
  for (let change = -WARM_UP; change < CHANGES; change += 1) {
    const step = (change + WARM_UP) % 3;
    let type: string;
    if (step === 0) {
      token = (await api('POST', `${base}/paymethods`, { card: CARD })).paymethod_token;
      type = 'Paymethod Created';
    } else if (step === 1) {
      await api('PUT', `${base}/paymethods/${String(token)}`, { label: `bench ${change}` });
      type = 'Paymethod Updated';
    } else {
      await api('DELETE', `${base}/paymethods/${String(token)}`);
      type = 'Paymethod Deleted';
    }
    const answeredAt = performance.now();
    await awaitLine(type, token);
    if (change >= 0) delays.push(performance.now() - answeredAt);
  }
} finally {
  await file.close();
  await runtime.close();
}

const sorted = [...delays].sort((a, b) => a - b);
const p99 = sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] as number;
const figures = {
  changes: delays.length,
  change_to_event_line_ms: { median: round(median(delays)), p99: round(p99), min: round(sorted[0] as number), max: round(sorted.at(-1) as number) },
  events_written: seen.length,
};
console.log(JSON.stringify(figures, null, 2));
recordRun('events', figures);
process.exit(0);

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
