import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { webhookPoster } from '#shared/aws/webhook-http.ts';
import { messageIdOf, retryDelaySeconds, subscribes } from '#shared/domain/webhooks/delivery.ts';
import { DISABLE_AFTER_FAILING_MS, RETRY_SCHEDULE_SECONDS } from '#shared/domain/webhooks/model.ts';
import { newSigningSecret, signatureHeader } from '#shared/domain/webhooks/signing.ts';
import { checkEndpointUrl, isDeliverableAddress } from '#shared/domain/webhooks/url-rules.ts';
import { matchesWebhookRule, WEBHOOK_RULE, webhookIntakeGroup } from '#shared/platform/webhooks.ts';
import { WEBHOOK_EVENT_TYPES } from '#shared/platform/names.ts';
import { LocalQueue } from '../../local/sqs-standin.ts';

const strict = { allowLoopback: false };

describe('URL rules', () => {
  it('refuses a name that resolves to any non-public address, at registration (DNS answered by the resolver port)', async () => {
    const resolving = (addresses: string[]) => async () => addresses;
    await expect(checkEndpointUrl('https://hooks.example.com/x', strict, resolving(['93.184.216.34']))).resolves.toBe('https://hooks.example.com/x');
    for (const addresses of [['10.1.2.3'], ['93.184.216.34', '127.0.0.1'], ['169.254.169.254'], ['fd12::1'], ['::ffff:192.168.0.1'], ['fe80::1'], ['100.64.0.1'], []]) {
      await expect(checkEndpointUrl('https://hooks.example.com/x', strict, resolving(addresses)), addresses.join(',')).rejects.toMatchObject({ code: 'INVALID_WEBHOOK_URL' });
    }
    await expect(checkEndpointUrl('https://nowhere.invalid/x', strict, async () => Promise.reject(new Error('ENOTFOUND')))).rejects.toMatchObject({ code: 'INVALID_WEBHOOK_URL' });
  });

  it('allows loopback only where the runtime says so, and private or link-local never', () => {
    expect(isDeliverableAddress('127.0.0.1', strict)).toBe(false);
    expect(isDeliverableAddress('127.0.0.1', { allowLoopback: true })).toBe(true);
    expect(isDeliverableAddress('::1', { allowLoopback: true })).toBe(true);
    for (const address of ['10.0.0.1', '192.168.1.1', '169.254.1.1', 'fe80::1', 'fc00::1', '224.0.0.1']) expect(isDeliverableAddress(address, { allowLoopback: true }), address).toBe(false);
  });
});

describe('signatures', () => {
  it('are Standard Webhooks v1 signatures the standardwebhooks library verifies, one per secret in force', () => {
    const [current, previous] = [newSigningSecret(), newSigningSecret()];
    const body = JSON.stringify({ type: 'paymethod.created', timestamp: '2026-11-28T00:00:00.000Z', data: { event_id: 'evt_1' } });
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(timestamp), 'webhook-signature': signatureHeader([current, previous], 'msg_1', timestamp, body) };
    expect(new Webhook(current).verify(body, headers)).toMatchObject({ type: 'paymethod.created' });
    expect(new Webhook(previous).verify(body, headers)).toMatchObject({ type: 'paymethod.created' });
    // A re-serialized body is not the signed one.
    expect(() => new Webhook(current).verify(JSON.stringify(JSON.parse(body), null, 1), headers)).toThrow();
  });
});

describe('schedule and routing', () => {
  it('retries for at least three days, the first retry 5 to 15 s after the failure, no step over SQS’s 12 hours', () => {
    const total = RETRY_SCHEDULE_SECONDS.reduce((sum, step) => sum + step, 0);
    expect(total).toBeGreaterThanOrEqual(3 * 86_400);
    expect(Math.max(...RETRY_SCHEDULE_SECONDS)).toBeLessThanOrEqual(43_200);
    for (const random of [0, 0.5, 0.999]) {
      const first = retryDelaySeconds(1, { random: () => random, laterRetryCapSeconds: 1 })!;
      expect(first).toBeGreaterThanOrEqual(5);
      expect(first).toBeLessThanOrEqual(15);
    }
    // Shortened locally by configuration: never the first step.
    expect(retryDelaySeconds(2, { random: Math.random, laterRetryCapSeconds: 2 })).toBe(2);
    expect(retryDelaySeconds(2, { random: Math.random })).toBe(60);
    expect(retryDelaySeconds(RETRY_SCHEDULE_SECONDS.length + 1, { random: Math.random })).toBeUndefined();
    expect(DISABLE_AFTER_FAILING_MS).toBe(5 * 86_400_000);
  });

  it('matches every detail-type the rule names, Document Scanned included, and nothing else', () => {
    expect(WEBHOOK_EVENT_TYPES['Document Scanned']).toBe('document.scanned');
    for (const type of WEBHOOK_RULE.eventPattern['detail-type']) expect(matchesWebhookRule({ source: type.startsWith('Paymethod') ? 'payments.paymethods' : 'payments.documents', 'detail-type': type })).toBe(true);
    expect(matchesWebhookRule({ source: 'payments.paymethods', 'detail-type': 'Paymethod Exploded' })).toBe(false);
    expect(matchesWebhookRule({ source: 'elsewhere', 'detail-type': 'Paymethod Created' })).toBe(false);
    expect(subscribes({ event_types: ['*'] }, 'paymethod.deleted')).toBe(true);
    expect(subscribes({ event_types: ['paymethod.created'] }, 'paymethod.deleted')).toBe(false);
    expect(messageIdOf('evt_1', 'whe_1')).toBe(messageIdOf('evt_1', 'whe_1'));
    expect(messageIdOf('evt_1', 'whe_1')).not.toBe(messageIdOf('evt_1', 'whe_2'));
  });

  it('groups the intake by the member the target path names, as EventBridge fills it', () => {
    const event = { detail: { organization_id: 'org_a', paymethod_token: 'mth_1' } };
    const [, ...members] = WEBHOOK_RULE.messageGroupIdPath.split('.');
    const named = members.reduce<unknown>((value, member) => (value as Record<string, unknown>)[member], event);
    expect(webhookIntakeGroup(event)).toBe(named);
    expect(webhookIntakeGroup(event)).toBe('org_a');
  });
});

describe('delivery agent', () => {
  it('refuses a loopback address unless allowed (checked on the address connected to), follows no redirect, and stops at its deadline', async () => {
    const server = http.createServer((req, res) => {
      if (req.url === '/redirect') res.writeHead(302, { Location: 'http://127.0.0.1:1/elsewhere' }).end();
      else if (req.url === '/hang') return;
      else res.writeHead(200).end('fine');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const post = (allowLoopback: boolean, path: string, timeoutMs = 15_000) => webhookPoster({ allowLoopback, timeoutMs })({ url: `${base}${path}`, headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(await post(false, '/ok')).toMatchObject({ outcome: 'refused' });
      // A name resolving to loopback is refused as its address is (localhost is what DNS rebinding would return).
      expect(await webhookPoster({ allowLoopback: false })({ url: base.replace('127.0.0.1', 'localhost') + '/ok', headers: {}, body: '{}' })).toMatchObject({ outcome: 'refused' });
      expect(await post(true, '/ok')).toMatchObject({ outcome: 'delivered', statusCode: 200, excerpt: 'fine' });
      expect(await post(true, '/redirect')).toMatchObject({ outcome: 'failed', statusCode: 302 });
      expect(await post(true, '/hang', 300)).toMatchObject({ outcome: 'timeout' });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('local queue', () => {
  it('serves quiet groups before a group with many messages in flight (SQS fair queues), and redrives after maxReceiveCount', () => {
    const queue = new LocalQueue({ name: 'q', granted: 'delivery', retentionSeconds: 3600, visibilityTimeoutSeconds: 30, maxReceiveCount: 2 });
    for (let index = 0; index < 100; index += 1) queue.send(`burst-${index}`, 'noisy');
    const inFlight = queue.receive(10);
    expect(inFlight.every((message) => message.body.startsWith('burst-'))).toBe(true);
    queue.send('quiet-1', 'quiet');
    expect(queue.receive(1)[0]!.body).toBe('quiet-1');
    const redriven = new LocalQueue({ name: 'r', granted: 'delivery', retentionSeconds: 3600, visibilityTimeoutSeconds: 30, maxReceiveCount: 2 });
    redriven.send('poison', undefined);
    for (let receive = 0; receive < 3; receive += 1) {
      const [message] = redriven.receive(1);
      if (message) redriven.changeVisibility(message.receiptHandle, 0);
    }
    expect(redriven.deadLetters.map((message) => message.body)).toEqual(['poison']);
  });
});

describe('docs/webhooks.md', () => {
  it('states the figures the code keeps', async () => {
    const { readFileSync } = await import('node:fs');
    const { ENDPOINT_CONCURRENCY, MAX_ENDPOINTS_PER_ORGANIZATION, DELIVERY_TIMEOUT_MS, ATTEMPT_RETENTION_DAYS, PARKED_RECHECK_SECONDS, RESPONSE_EXCERPT_BYTES, SLOT_WAIT_MS } = await import('#shared/domain/webhooks/model.ts');
    const { PARKED_SHARDS, ATTEMPT_SHARDS, SETTLED_SHARDS } = await import('#shared/store/webhooks.ts');
    const { WEBHOOK_INTAKE_AGE_ALARM_SECONDS } = await import('#infra/stack.ts');
    const { WEBHOOK_QUEUES: queues, WEBHOOK_QUEUE_TRIGGERS: triggers } = await import('#shared/platform/webhooks.ts');
    const doc = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    const total = RETRY_SCHEDULE_SECONDS.reduce((sum, step) => sum + step, 0);
    expect(doc).toContain(`At most ${MAX_ENDPOINTS_PER_ORGANIZATION} endpoints per organization`);
    expect(doc).toContain(`inside one of the endpoint's ${ENDPOINT_CONCURRENCY} slots`);
    expect(doc).toContain(`within ${DELIVERY_TIMEOUT_MS / 1000} seconds`);
    expect(doc).toContain(`${RETRY_SCHEDULE_SECONDS.length} retries over about ${Math.round((total / 86_400) * 10) / 10} days (${total.toLocaleString('en-US')} s)`);
    expect(doc).toContain(`last ${ATTEMPT_RETENTION_DAYS} days`);
    expect(doc).toContain(`first ${RESPONSE_EXCERPT_BYTES.toLocaleString('en-US')} bytes`);
    expect(doc).toContain(`queued ${PARKED_RECHECK_SECONDS} s later`);
    expect(doc).toContain(`${PARKED_SHARDS} shards`);
    expect(doc).toContain(`tries again for up to ${SLOT_WAIT_MS / 1000} s`);
    expect(doc).toContain(`parked messages spread over ${PARKED_SHARDS} shards (about ${5_000 / PARKED_SHARDS} writes a second each)`);
    // The million-message table adds up.
    const parts = ['$3.32 for both queues', '= $0.90', '$8.13', '$1.00'].map((part) => {
      expect(doc).toContain(part);
      return Number(/\$(\d+\.\d+)/.exec(part)![1]);
    });
    expect(doc).toContain(`about $${parts.reduce((sum, part) => sum + part, 0).toFixed(2)}`);
    expect(doc).toContain(`over ${ATTEMPT_SHARDS} shards`);
    expect(doc).toContain(`${SETTLED_SHARDS} shards), which \`recover\``);
    expect(doc).toContain(`waited ${WEBHOOK_INTAKE_AGE_ALARM_SECONDS} s or more`);
    expect(doc).toContain(`keeps messages ${queues.delivery.retentionSeconds / 86_400} days`);
    expect(doc).toContain(`received ${queues.delivery.maxReceiveCount.toLocaleString('en-US')} times`);
    expect(doc).toContain(`MaximumConcurrency ${triggers.find((trigger) => trigger.handler === 'webhooks-send')!.maximumConcurrency}`);
    expect(doc).toContain(`${ENDPOINT_CONCURRENCY} deliveries at once`);
  });

  it('gives as measured latency the medians of the three runs it names, saved in bench/results/webhooks', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const doc = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    const commit = /Medians of three runs at `([0-9a-f]{7,40})`/.exec(doc)?.[1];
    expect(commit, 'the doc names the commit its runs measured').toBeDefined();
    const folder = new URL('../../bench/results/webhooks/', import.meta.url);
    type Figures = Record<string, Record<string, number>>;
    const runs = readdirSync(folder)
      .map((name) => JSON.parse(readFileSync(new URL(name, folder), 'utf8')) as { commit: string; dirty: boolean; figures: Figures })
      .filter((run) => run.commit.startsWith(commit!));
    expect(runs.map((run) => run.dirty)).toEqual([false, false, false]);
    const median = (pick: (figures: Figures) => number) => runs.map((run) => pick(run.figures)).sort((a, b) => a - b)[1]!;
    const ms = (pick: (figures: Figures) => number) => `${median(pick).toLocaleString('en-US')} ms`;
    expect(doc).toContain(`| Healthy endpoint alone | ${ms((f) => f.healthy_alone!.p50_ms!)} | ${ms((f) => f.healthy_alone!.p99_ms!)} |`);
    type Nested = Record<string, Record<string, Record<string, number>>>;
    const ratios = runs.map((run) => run.figures.healthy_beside_hung_endpoint!.p99_vs_control!);
    const control = ms((f) => (f as unknown as Nested).healthy_beside_hung_endpoint!.interleaved_control!.p99_ms!);
    expect(doc).toContain(
      `| Healthy endpoint beside a hung one of its organization | ${ms((f) => f.healthy_beside_hung_endpoint!.p50_ms!)} | ${ms((f) => f.healthy_beside_hung_endpoint!.p99_ms!)} (control ${control}; ${median((f) => f.healthy_beside_hung_endpoint!.p99_vs_control!).toFixed(2)}x) |`,
    );
    expect(doc).toContain(`(${ratios.sort((a, b) => a - b).map((value) => `${value.toFixed(2)}x`).join(', ').replace(/, ([^,]+)$/, ' and $1')}:`);
    const range = (pick: (figures: Figures) => number) => {
      const values = runs.map((run) => pick(run.figures)).sort((a, b) => a - b);
      return `${values[0]!.toLocaleString('en-US')} to ${values[2]!.toLocaleString('en-US')} ms`;
    };
    expect(doc).toContain(`under 1 s in all three runs (${range((f) => f.healthy_alone!.p99_ms!)})`);
    expect(doc).toContain(`under 3 s in all three (${range((f) => f.healthy_during_other_org_burst!.p99_ms!)})`);
    expect(doc).toContain(`| The first organization during the other's burst | ${ms((f) => f.healthy_during_other_org_burst!.p50_ms!)} | ${ms((f) => f.healthy_during_other_org_burst!.p99_ms!)} |`);
    expect(doc).toContain(`| The burst's delivery rate | ${median((f) => f.burst!.steady_rate_per_second!)} a second |`);
  });
});
