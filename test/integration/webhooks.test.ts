import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { call, PARTNER, UNRELATED } from '../support/api.ts';
import type { ApiAnswer, Identity } from '../support/api.ts';
import { runtimeStores } from '../support/documents.ts';
import type { RuntimeStores } from '../support/documents.ts';
import { CARD, CARD_NUMBER, expectError, locationPath, unique } from '../support/paymethods.ts';
import { startReceiver } from '../support/webhook-receiver.ts';
import type { Delivery } from '../support/webhook-receiver.ts';

/**
 * The contract's "Webhooks" end to end against `npm start`: endpoints
 * registered through the API, events caused by real requests, deliveries
 * received over HTTP on loopback and verified with the `standardwebhooks`
 * library (the spec authors' verifier).
 */
let stores: RuntimeStores;
const receivers: Array<Awaited<ReturnType<typeof startReceiver>>> = [];

beforeAll(() => {
  stores = runtimeStores();
});
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  stores?.destroy();
});

const endpointsPath = (org: string) => `/v3/organizations/${org}/webhook_endpoints`;
const receiver = async (...args: Parameters<typeof startReceiver>) => {
  const started = await startReceiver(...args);
  receivers.push(started);
  return started;
};
async function register(org: Identity, body: Record<string, unknown>): Promise<Record<string, string>> {
  const answer = await call(endpointsPath(org.organizationId), { method: 'POST', as: org, body });
  expect(answer.status, answer.text).toBe(201);
  return answer.body as Record<string, string>;
}
async function createCard(org: Identity, loc = unique('loc_')): Promise<string> {
  const answer = await call(`${locationPath(org.organizationId, loc)}/paymethods`, { method: 'POST', as: org, body: { card: CARD } });
  expect(answer.status, answer.text).toBe(201);
  return (answer.body as { paymethod_token: string }).paymethod_token;
}
const verify = (secret: string, delivery: Delivery) => new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
const code = (answer: ApiAnswer) => (answer.body as { response: { response_code: string } }).response.response_code;

describe('endpoints API', () => {
  let org: Identity;
  beforeAll(async () => {
    org = await stores.freshOrganization(PARTNER.organizationId);
  });

  it('creates an endpoint with its secret shown once, then reads, lists, updates and deletes it', async () => {
    const hook = await receiver();
    const created = await call(endpointsPath(org.organizationId), { method: 'POST', as: org, body: { url: hook.url, description: 'orders' } });
    expect(created.status, created.text).toBe(201);
    const body = created.body as Record<string, unknown>;
    expect(body.webhook_endpoint_id).toMatch(/^whe_[0-9A-Za-z]{22}$/);
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(String(body.secret).slice(6), 'base64')).toHaveLength(32);
    expect(body).toMatchObject({ url: hook.url, event_types: ['*'], description: 'orders', status: 'enabled', response: { response_desc: 'Create Successful.' } });
    const self = (body.links as { self: string }).self;
    expect(created.headers.get('location')).toBe(self);
    expect(self).toMatch(new RegExp(`/v3/organizations/${org.organizationId}/webhook_endpoints/${String(body.webhook_endpoint_id)}$`));

    const path = `${endpointsPath(org.organizationId)}/${String(body.webhook_endpoint_id)}`;
    const read = await call(path, { as: org });
    expect(read.status).toBe(200);
    expect(read.text).not.toContain('whsec_');
    expect(read.text).not.toContain('secret');
    const second = await register(org, { url: hook.url, event_types: ['paymethod.created'] });
    const list = await call(endpointsPath(org.organizationId), { as: org });
    expect(list.status).toBe(200);
    expect(list.text).not.toContain('whsec_');
    const ids = (list.body as { results: Array<{ webhook_endpoint_id: string }> }).results.map((result) => result.webhook_endpoint_id);
    expect(ids.slice(0, 2)).toEqual([second.webhook_endpoint_id, body.webhook_endpoint_id]);

    const updated = await call(path, { method: 'PUT', as: org, body: { status: 'disabled', event_types: ['paymethod.updated', 'document.scanned'] } });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({ status: 'disabled', disabled_reason: 'disabled_by_merchant', event_types: ['paymethod.updated', 'document.scanned'], description: 'orders' });
    const enabled = await call(path, { method: 'PUT', as: org, body: { status: 'enabled' } });
    expect(enabled.body).toMatchObject({ status: 'enabled' });
    expect(enabled.body).not.toHaveProperty('disabled_reason');

    const removed = await call(path, { method: 'DELETE', as: org });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ webhook_endpoint_id: body.webhook_endpoint_id, response: { response_desc: 'Delete Successful.' } });
    expect((await call(path, { as: org })).status).toBe(404);
    expect((await call(path, { method: 'DELETE', as: org })).status).toBe(404);
  });

  it('never answers a secret twice: an Idempotency-Key replay answers the endpoint without it', async () => {
    const hook = await receiver();
    const key = unique('idem-');
    const first = await call(endpointsPath(org.organizationId), { method: 'POST', as: org, body: { url: hook.url }, headers: { 'Idempotency-Key': key } });
    const replay = await call(endpointsPath(org.organizationId), { method: 'POST', as: org, body: { url: hook.url }, headers: { 'Idempotency-Key': key } });
    expect(first.status).toBe(201);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect((replay.body as Record<string, unknown>).webhook_endpoint_id).toBe((first.body as Record<string, unknown>).webhook_endpoint_id);
    expect(replay.text).not.toContain('whsec_');
  });

  it('refuses URLs that break the rules with 400 INVALID_WEBHOOK_URL', async () => {
    const refused = [
      'http://example.com/hooks',
      'https://user:pass@example.com/hooks',
      `https://example.com/${'a'.repeat(2049)}`,
      'https://10.0.0.8/hooks',
      'https://192.168.1.1/hooks',
      'https://172.16.0.1/hooks',
      'https://169.254.169.254/latest/meta-data',
      'https://[fe80::1]/hooks',
      'https://[fd00::1]/hooks',
      'https://224.0.0.1/hooks',
      'https://0.0.0.0/hooks',
      'https://[::ffff:10.0.0.1]/hooks',
      'http://10.0.0.8/hooks',
      'not a url',
    ];
    for (const url of refused) {
      const answer = await call(endpointsPath(org.organizationId), { method: 'POST', as: org, body: { url } });
      expect(answer.status, url).toBe(400);
      expect(code(answer), url).toBe('INVALID_WEBHOOK_URL');
    }
    // Locally loopback receivers are allowed (the runtime's configuration, never a stack's).
    for (const url of ['http://localhost:9/hooks', 'http://[::1]:9/hooks', 'https://127.0.0.1/hooks']) {
      expect((await call(endpointsPath(org.organizationId), { method: 'POST', as: org, body: { url } })).status, url).toBe(201);
    }
  });

  it('names every bad member of a body', async () => {
    const answer = await call(endpointsPath(org.organizationId), { method: 'POST', as: org, body: { url: 'https://example.com', event_types: ['paymethod.exploded', '*'], description: 'x'.repeat(256), colour: 'red' } });
    expectError(answer, 400, ['event_types.0', 'description', 'colour']);
    expectError(await call(endpointsPath(org.organizationId), { method: 'POST', as: org, body: { url: 'https://example.com', event_types: [] } }), 400, ['event_types']);
    expectError(await call(endpointsPath(org.organizationId), { method: 'POST', as: org, body: { url: 'https://example.com', organization_id: 'org_other' } }), 400, ['organization_id']);
  });

  it("lets a partner manage its child organization's endpoints, and nobody else", async () => {
    const hook = await receiver();
    const created = await call(endpointsPath(org.organizationId), { method: 'POST', as: PARTNER as Identity, body: { url: hook.url } });
    expect(created.status, created.text).toBe(201);
    expect((await call(endpointsPath(org.organizationId), { as: UNRELATED as Identity })).status).toBe(403);
    const path = `${endpointsPath(org.organizationId)}/${String((created.body as Record<string, unknown>).webhook_endpoint_id)}`;
    expect((await call(path, { as: org })).status).toBe(200);
    // Another organization's endpoint id under one's own path is 404.
    const own = await stores.freshOrganization();
    expect((await call(path.replace(org.organizationId, own.organizationId), { as: own })).status).toBe(404);
  });

  it('allows at most 16 endpoints per organization (the 17th is 409 ENDPOINT_LIMIT), and deleting one frees its place', async () => {
    const limited = await stores.freshOrganization();
    const made: string[] = [];
    for (let index = 0; index < 16; index += 1) made.push((await register(limited, { url: `https://127.0.0.1/hooks/${index}` })).webhook_endpoint_id!);
    const seventeenth = await call(endpointsPath(limited.organizationId), { method: 'POST', as: limited, body: { url: 'https://127.0.0.1/hooks/16' } });
    expect(seventeenth.status).toBe(409);
    expect(code(seventeenth)).toBe('ENDPOINT_LIMIT');
    expect((await call(`${endpointsPath(limited.organizationId)}/${made[0]}`, { method: 'DELETE', as: limited })).status).toBe(200);
    await register(limited, { url: 'https://127.0.0.1/hooks/again' });
    const list = await call(`${endpointsPath(limited.organizationId)}?page_size=10&page_index=1`, { as: limited });
    expect((list.body as { results: unknown[] }).results).toHaveLength(6);
    expect(list.body).not.toHaveProperty('links.next');
  });
});

describe('delivery', () => {
  let org: Identity;
  beforeAll(async () => {
    org = await stores.freshOrganization(PARTNER.organizationId);
  });

  it('delivers signed events of its own organization only, as Standard Webhooks 1.0 messages', async () => {
    const hook = await receiver();
    const endpoint = await register(org, { url: hook.url, event_types: ['paymethod.created'] });
    const other = await stores.freshOrganization();
    await createCard(other);
    const token = await createCard(org);
    const [delivery] = await hook.waitFor((candidate) => candidate.json.data.paymethod_token === token);
    expect(delivery!.headers['content-type']).toBe('application/json');
    expect(delivery!.headers['webhook-id']).toMatch(/^msg_/);
    expect(Math.abs(Number(delivery!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    expect(verify(endpoint.secret!, delivery!)).toMatchObject({ type: 'paymethod.created' });
    expect(delivery!.json.type).toBe('paymethod.created');
    expect(delivery!.json.timestamp).toBe(delivery!.json.data.occurred_at);
    expect(delivery!.json.data).toMatchObject({ organization_id: org.organizationId, paymethod_token: token, event_id: expect.stringMatching(/^evt_/) });
    expect(delivery!.body).not.toContain(CARD_NUMBER);
    // A signature under another secret does not verify.
    expect(() => verify(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, delivery!)).toThrow();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(hook.deliveries.every((candidate) => candidate.json.data.organization_id === org.organizationId && candidate.json.type === 'paymethod.created')).toBe(true);
  });

  it('sends webhook.ping on ping (202), whatever event_types say', async () => {
    const hook = await receiver();
    const endpoint = await register(org, { url: hook.url, event_types: ['document.deleted'] });
    const answer = await call(`${endpointsPath(org.organizationId)}/${endpoint.webhook_endpoint_id}/ping`, { method: 'POST', as: org });
    expect(answer.status, answer.text).toBe(202);
    const [delivery] = await hook.waitFor((candidate) => candidate.json.type === 'webhook.ping');
    expect(delivery!.json.data).toEqual({ webhook_endpoint_id: endpoint.webhook_endpoint_id, organization_id: org.organizationId });
    verify(endpoint.secret!, delivery!);
  });

  it('signs with both secrets after roll_secret until the previous one expires', async () => {
    const hook = await receiver();
    const endpoint = await register(org, { url: hook.url });
    const path = `${endpointsPath(org.organizationId)}/${endpoint.webhook_endpoint_id}`;
    const rolled = await call(`${path}/roll_secret`, { method: 'POST', as: org, body: { expire_previous_after_seconds: 3600 } });
    expect(rolled.status, rolled.text).toBe(200);
    const next = (rolled.body as { secret: string }).secret;
    expect(next).toMatch(/^whsec_/);
    expect(next).not.toBe(endpoint.secret);
    expect((await call(path, { as: org })).text).not.toContain('whsec_');
    await call(`${path}/ping`, { method: 'POST', as: org });
    const [both] = await hook.waitFor((candidate) => candidate.json.type === 'webhook.ping');
    expect(String(both!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    verify(endpoint.secret!, both!);
    verify(next, both!);
    // Without an overlap only the new secret signs.
    const again = await call(`${path}/roll_secret`, { method: 'POST', as: org, body: { expire_previous_after_seconds: 0 } });
    const newest = (again.body as { secret: string }).secret;
    await call(`${path}/ping`, { method: 'POST', as: org });
    const [, single] = await hook.waitFor((candidate) => candidate.json.type === 'webhook.ping', 2);
    expect(String(single!.headers['webhook-signature']).split(' ')).toHaveLength(1);
    verify(newest, single!);
    expect(() => verify(next, single!)).toThrow();
    expectError(await call(`${path}/roll_secret`, { method: 'POST', as: org, body: { expire_previous_after_seconds: 604_801 } }), 400, ['expire_previous_after_seconds']);
  });

  it('retries a failure 5 to 15 seconds later, keeps the webhook-id, and logs every attempt newest first', async () => {
    const hook = await receiver((_delivery, index) => (index === 0 ? { status: 500, body: 'try later' } : { status: 204 }));
    const endpoint = await register(org, { url: hook.url, event_types: ['paymethod.created'] });
    await createCard(org);
    const [first, second] = await hook.waitFor(() => true, 2, 40_000);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    const gap = second!.at - first!.at;
    expect(gap).toBeGreaterThanOrEqual(5_000);
    expect(gap).toBeLessThanOrEqual(16_500);
    const attempts = await call(`${endpointsPath(org.organizationId)}/${endpoint.webhook_endpoint_id}/attempts`, { as: org });
    expect(attempts.status).toBe(200);
    const results = (attempts.body as { results: Array<Record<string, unknown>> }).results;
    expect(results.map((attempt) => attempt.outcome)).toEqual(['delivered', 'failed']);
    expect(results[1]).toMatchObject({ status_code: 500, response_excerpt: 'try later', message_id: first!.headers['webhook-id'], event_type: 'paymethod.created', event_id: first!.json.data.event_id });
    expect(results[0]).toMatchObject({ status_code: 204, attempt_id: expect.any(String), attempted_at: expect.any(String), duration_ms: expect.any(Number) });
    const page = await call(`${endpointsPath(org.organizationId)}/${endpoint.webhook_endpoint_id}/attempts?page_size=1`, { as: org });
    const next = (page.body as { links: { next?: string } }).links.next;
    expect(next).toBeDefined();
    const following = await fetch(next!, { headers: { Authorization: `Basic ${Buffer.from(`${org.accessId}:${org.secureKey}`).toString('base64')}`, 'X-Service-Auth-Organization-Id': org.organizationId } });
    expect(((await following.json()) as { results: Array<Record<string, unknown>> }).results.map((attempt) => attempt.outcome)).toEqual(['failed']);
  }, 60_000);

  it('keeps one record in commit order: a later message waits until the earlier one is delivered; other records do not wait', async () => {
    // The first record whose creation arrives fails its first attempt; everything else succeeds.
    let slow: string | undefined;
    const hook = await receiver((delivery) => {
      const token = String(delivery.json.data.paymethod_token);
      if (slow === undefined && delivery.json.type === 'paymethod.created') slow = token;
      return token === slow && hook.deliveries.filter((candidate) => candidate.json.data.paymethod_token === token).length === 1 ? { status: 503 } : { status: 200 };
    });
    await register(org, { url: hook.url, event_types: ['paymethod.created', 'paymethod.updated'] });
    const loc = unique('loc_');
    const first = await createCard(org, loc);
    await hook.waitFor((delivery) => delivery.json.data.paymethod_token === first);
    expect(slow).toBe(first);
    const update = await call(`${locationPath(org.organizationId, loc)}/paymethods/${first}`, { method: 'PUT', as: org, body: { card: { expire_month: '11' } } });
    expect(update.status, update.text).toBe(200);
    const other = await createCard(org, loc);
    const [otherDelivery] = await hook.waitFor((delivery) => delivery.json.data.paymethod_token === other);
    const ofFirst = await hook.waitFor((delivery) => delivery.json.data.paymethod_token === first, 3, 40_000);
    expect(ofFirst.map((delivery) => delivery.json.type)).toEqual(['paymethod.created', 'paymethod.created', 'paymethod.updated']);
    // The other record was not held behind the failing one.
    expect(otherDelivery!.at).toBeLessThan(ofFirst[1]!.at);
  }, 60_000);

  it("holds an endpoint to 8 requests at once; its backlog waits parked and every message arrives, once", async () => {
    // 1.5 s an answer: longer than a sender waits for a slot, so the messages beyond 8 park and are taken out again.
    let inFlight = 0;
    let most = 0;
    const hook = await receiver(() => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      setTimeout(() => (inFlight -= 1), 1_500);
      return { status: 200, delayMs: 1_500 };
    });
    await register(org, { url: hook.url, event_types: ['paymethod.created'] });
    const loc = unique('loc_');
    const tokens = await Promise.all(Array.from({ length: 30 }, () => createCard(org, loc)));
    const wanted = new Set(tokens);
    const arrived = await hook.waitFor((delivery) => wanted.has(String(delivery.json.data.paymethod_token)), tokens.length, 60_000);
    expect(new Set(arrived.map((delivery) => delivery.json.data.paymethod_token)).size).toBe(tokens.length);
    expect(new Set(hook.deliveries.map((delivery) => delivery.headers['webhook-id'])).size).toBe(hook.deliveries.length);
    expect(most).toBe(8);
  }, 90_000);

  it('disables an endpoint that answers 410, holds its messages, sends only new ones when enabled, and recover sends the held ones with new ids', async () => {
    const hook = await receiver(() => ({ status: 410, body: 'gone' }));
    const endpoint = await register(org, { url: hook.url, event_types: ['paymethod.created'] });
    const path = `${endpointsPath(org.organizationId)}/${endpoint.webhook_endpoint_id}`;
    const since = new Date().toISOString();
    const first = await createCard(org);
    await hook.waitFor((delivery) => delivery.json.data.paymethod_token === first);
    await expect.poll(async () => (await call(path, { as: org })).body, { timeout: 10_000 }).toMatchObject({ status: 'disabled', disabled_reason: 'endpoint_gone' });
    const held = await createCard(org);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(hook.deliveries.some((delivery) => delivery.json.data.paymethod_token === held)).toBe(false);

    hook.answerWith(() => ({ status: 200 }));
    expect((await call(path, { method: 'PUT', as: org, body: { status: 'enabled' } })).status).toBe(200);
    const fresh = await createCard(org);
    await hook.waitFor((delivery) => delivery.json.data.paymethod_token === fresh);
    expect(hook.deliveries.some((delivery) => delivery.json.data.paymethod_token === held)).toBe(false);

    const recovered = await call(`${path}/recover`, { method: 'POST', as: org, body: { since } });
    expect(recovered.status, recovered.text).toBe(202);
    const again = await hook.waitFor((delivery) => delivery.json.data.paymethod_token === held || (delivery.json.data.paymethod_token === first && delivery.headers['webhook-id'] !== hook.deliveries[0]!.headers['webhook-id']), 2);
    const ids = new Set(again.map((delivery) => delivery.headers['webhook-id']));
    expect(ids.size).toBe(2);
    expect(ids.has(hook.deliveries[0]!.headers['webhook-id'])).toBe(false);
    expectError(await call(`${path}/recover`, { method: 'POST', as: org, body: { since: 'yesterday' } }), 400, ['since']);
  }, 60_000);

  it('sends nothing more to a deleted endpoint', async () => {
    const hook = await receiver();
    const endpoint = await register(org, { url: hook.url, event_types: ['paymethod.created'] });
    expect((await call(`${endpointsPath(org.organizationId)}/${endpoint.webhook_endpoint_id}`, { method: 'DELETE', as: org })).status).toBe(200);
    await createCard(org);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(hook.deliveries).toHaveLength(0);
  });

  it('records a timeout-free refusal when nothing listens, and retries it', async () => {
    const hook = await receiver();
    const port = new URL(hook.url).port;
    await hook.close();
    const endpoint = await register(org, { url: `http://127.0.0.1:${port}/hooks`, event_types: ['paymethod.created'] });
    await createCard(org);
    await expect
      .poll(async () => ((await call(`${endpointsPath(org.organizationId)}/${endpoint.webhook_endpoint_id}/attempts`, { as: org })).body as { results: Array<{ outcome: string }> }).results[0]?.outcome, { timeout: 10_000 })
      .toBe('refused');
  });
});
