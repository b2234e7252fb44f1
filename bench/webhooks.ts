/**
 * Webhook delivery benchmark: `npm run bench:webhooks`.
 *
 * Starts the local runtime in this process (the same handlers, the SQS
 * stand-in with fair-queue receives, DynamoDB Local) with receivers on
 * loopback, and measures commit-to-delivery latency: from the event's
 * `occurred_at` (the change's commit time) to the POST's arrival.
 * 0. BENCH_WARMUP (50) creates delivered first, not measured: the modules load
 *    and every code path of the pipeline is compiled, in Node and in DynamoDB
 *    Local, so the first measured phase does not carry that alone.
 * 1. BENCH_CHANGES (200) paymethod creates of organization A, one healthy endpoint.
 * 2. Interleaved, request by request: BENCH_CHANGES creates of A again (still
 *    one healthy endpoint) and as many of organization C, which has a healthy
 *    endpoint and a second one that never answers (each attempt holds one of
 *    its slots for 15 s, then is retried). Both see the same machine at the
 *    same moments, so the ratio of C's healthy p99 to A's is what the hung
 *    sibling costs C, not drift between two phases. A phase of C alone after
 *    A's (the old design) also carries whatever the machine does meanwhile.
 * 3. The same again while organization B's Account Updater burst runs:
 *    BENCH_BURST (20,000) `Paymethod Account Updated` events put on the bus
 *    (the path from the bus on is the one a run's events take; the run itself
 *    only writes the table and never waits on webhooks), delivered to B's
 *    endpoint, which takes BENCH_ENDPOINT_MS (20) per request. Reports A's
 *    p50/p99 during the burst and B's delivery rate against its cap
 *    (ENDPOINT_CONCURRENCY / BENCH_ENDPOINT_MS).
 */
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { randomBytes } from 'node:crypto';
import { startLocalRuntime } from '#local/runtime.ts';
import { ENDPOINT_CONCURRENCY } from '#shared/domain/webhooks/model.ts';
import { EVENT_SOURCES } from '#shared/platform/names.ts';
import { startReceiver } from '../test/support/webhook-receiver.ts';
import { recordRun } from './results.ts';

const CHANGES = Number(process.env.BENCH_CHANGES ?? 200);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 50);
const BURST = Number(process.env.BENCH_BURST ?? 20_000);
const ENDPOINT_MS = Number(process.env.BENCH_ENDPOINT_MS ?? 20);
/** How long to wait for the burst's deliveries after A's changes (seconds); the rate is measured over what arrived. Default: all of them. */
const BURST_WAIT_S = Number(process.env.BENCH_BURST_WAIT_S ?? 3600);
const [A, B, C] = ['org_bench_a', 'org_bench_b', 'org_bench_c'];
const CARD = { card_type: 'visa', name_on_card: 'Bench Card', account_number: '4111111111111111', expire_month: 12, expire_year: 2031 };

const runtime = await startLocalRuntime({
  port: 0,
  seed: {
    organizations: [
      { organization_id: A, credentials: [{ api_access_id: 'bench-a', api_secure_key: 'bench-a-key' }] },
      { organization_id: B, credentials: [{ api_access_id: 'bench-b', api_secure_key: 'bench-b-key' }] },
      { organization_id: C, credentials: [{ api_access_id: 'bench-c', api_secure_key: 'bench-c-key' }] },
    ],
  },
});
const headersOf = (org: string, id: string) => ({ Authorization: `Basic ${Buffer.from(`${id}:${id}-key`).toString('base64')}`, 'X-Service-Auth-Organization-Id': org, 'Content-Type': 'application/json' });
async function api(org: string, id: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${runtime.url}${path}`, { method, headers: headersOf(org, id), body: body === undefined ? undefined : JSON.stringify(body) });
  const answer = (await response.json()) as Record<string, unknown>;
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

const healthy = await startReceiver(() => ({ status: 200 }));
const hung = await startReceiver(() => 'hang');
const slow = await startReceiver(() => ({ status: 200, delayMs: ENDPOINT_MS }));
const register = (org: string, id: string, url: string, eventTypes: string[]) => api(org, id, 'POST', `/v3/organizations/${org}/webhook_endpoints`, { url, event_types: eventTypes });

/**
 * `count` creates of each organization, four at a time, the organizations taking turns request by request;
 * each organization's latencies at the healthy endpoint (ms).
 */
async function changesOf(orgs: ReadonlyArray<{ org: string; id: string }>, label: string, count = CHANGES): Promise<number[][]> {
  const tokens = orgs.map(() => [] as string[]);
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < count * orgs.length) {
        const turn = next % orgs.length;
        next += 1;
        const { org, id } = orgs[turn]!;
        tokens[turn]!.push(String((await api(org, id, 'POST', `/v3/organizations/${org}/locations/loc_${label}/paymethods`, { card: CARD })).paymethod_token));
      }
    }),
  );
  return Promise.all(
    tokens.map(async (ofOrg) => {
      const wanted = new Set(ofOrg);
      const arrived = await healthy.waitFor((delivery) => wanted.has(String(delivery.json.data.paymethod_token)), ofOrg.length, 600_000);
      return arrived.map((delivery) => delivery.at - Date.parse(String(delivery.json.data.occurred_at)));
    }),
  );
}
const ORG_A = { org: A, id: 'bench-a' };
const ORG_C = { org: C, id: 'bench-c' };
const changesOfA = async (label: string, count = CHANGES) => (await changesOf([ORG_A], label, count))[0]!;

const progress = (message: string) => process.stderr.write(`[bench:webhooks] ${new Date().toISOString()} ${message}\n`);

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * p) - 1))] ?? Number.NaN;
};
const ratio = (values: readonly number[], base: readonly number[]) => Math.round((percentile(values, 0.99) / percentile(base, 0.99)) * 100) / 100;
const summary = (values: readonly number[]) => ({ count: values.length, p50_ms: Math.round(percentile(values, 0.5)), p99_ms: Math.round(percentile(values, 0.99)), max_ms: Math.round(Math.max(...values)) });

/** The burst's events, as the Account Updater's publisher puts them: ten per PutEvents call, eight calls at a time. */
async function burstOfB(): Promise<void> {
  const bus = new EventBridgeClient({ region: 'us-east-1', endpoint: runtime.endpoints.eventbridge });
  let sent = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (sent < BURST) {
        const first = sent;
        sent += 10;
        const entries = Array.from({ length: Math.min(10, BURST - first) }, (_unused, index) => {
          const token = `mth_${randomBytes(11).toString('hex').slice(0, 22)}`;
          const at = new Date().toISOString();
          return {
            EventBusName: 'payments-events-local',
            Source: EVENT_SOURCES.paymethods,
            DetailType: 'Paymethod Account Updated',
            Detail: JSON.stringify({
              event_id: `evt_${randomBytes(16).toString('hex')}`,
              organization_id: B,
              occurred_at: at,
              paymethod_token: token,
              card: { last_4_account_number: String(1000 + ((first + index) % 9000)), expire_month: 12, expire_year: 2033, card_type: 'visa', au_code: 'exp' },
              previous: { last_4_account_number: String(1000 + ((first + index) % 9000)), expire_month: 12, expire_year: 2030 },
            }),
          };
        });
        const { FailedEntryCount } = await bus.send(new PutEventsCommand({ Entries: entries }));
        if (FailedEntryCount) throw new Error(`${FailedEntryCount} burst events refused`);
      }
    }),
  );
  bus.destroy();
}

let figures: Record<string, unknown>;
try {
  await register(A, 'bench-a', healthy.url, ['paymethod.created']);
  // Warm-up, not measured: module loads (the cold starts) and the compilation of every path.
  await changesOfA('warm', WARMUP);

  progress('warm');
  const alone = await changesOfA('alone');
  progress('alone done');
  await register(C, 'bench-c', healthy.url, ['paymethod.created']);
  await register(C, 'bench-c', hung.url, ['paymethod.created']);
  const [control, besideHung] = await changesOf([ORG_A, ORG_C], 'hung');
  progress('beside hung done');

  await register(B, 'bench-b', slow.url, ['paymethod.account_updated']);
  const burstStarted = Date.now();
  const burst = burstOfB().then(() => progress('burst on the bus'));
  const ticker = setInterval(() => progress(`B delivered ${slow.deliveries.length}, A ${healthy.deliveries.length}`), 5000);
  // A's changes start once the burst is under way, and run while it lasts.
  await slow.waitFor(() => true, Math.min(200, BURST), 600_000);
  progress('burst under way');
  const duringBurst = await changesOfA('burst');
  progress('A during burst done');
  const aDoneAt = Date.now();
  await burst;
  await slow.waitFor(() => true, BURST, BURST_WAIT_S * 1000).catch(() => undefined);
  clearInterval(ticker);
  const delivered = [...slow.deliveries];
  const times = delivered.map((delivery) => delivery.at).sort((a, b) => a - b);
  // The steady rate: the middle 80% of the burst's deliveries, per second.
  const [from, to] = [times[Math.floor(times.length * 0.1)]!, times[Math.floor(times.length * 0.9)]!];
  const steadyRate = (times.length * 0.8) / ((to - from) / 1000);
  const cap = ENDPOINT_CONCURRENCY / (ENDPOINT_MS / 1000);
  const burstLatency = delivered.map((delivery) => delivery.at - Date.parse(String(delivery.json.data.occurred_at)));
  figures = {
    changes: CHANGES,
    warmup_changes: WARMUP,
    healthy_alone: summary(alone),
    healthy_beside_hung_endpoint: {
      ...summary(besideHung!),
      interleaved_control: summary(control!),
      p99_vs_control: ratio(besideHung!, control!),
      p99_vs_alone: ratio(besideHung!, alone),
      hung_attempts_started: hung.deliveries.length,
    },
    healthy_during_other_org_burst: { ...summary(duringBurst), burst_delivered_when_a_finished: slow.deliveries.filter((delivery) => delivery.at <= aDoneAt).length },
    burst: {
      events: BURST,
      delivered_in_run: delivered.length,
      endpoint_ms: ENDPOINT_MS,
      endpoint_concurrency: ENDPOINT_CONCURRENCY,
      cap_per_second: cap,
      steady_rate_per_second: Math.round(steadyRate),
      rate_vs_cap: Math.round((steadyRate / cap) * 100) / 100,
      first_to_last_delivery_s: Math.round((times.at(-1)! - times[0]!) / 100) / 10,
      bus_to_last_delivery_s: Math.round((times.at(-1)! - burstStarted) / 100) / 10,
      commit_to_delivery: summary(burstLatency),
      duplicate_deliveries: delivered.length - new Set(delivered.map((delivery) => delivery.headers['webhook-id'])).size,
    },
  };
} finally {
  await Promise.all([healthy.close(), hung.close(), slow.close()]);
  await runtime.close();
}
console.log(JSON.stringify(figures, null, 2));
recordRun('webhooks', figures);
process.exit(0);
