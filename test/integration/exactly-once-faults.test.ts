/**
 * Exactly-once creates under dependency faults. Real sockets: a loopback
 * fault proxy (support/fault-proxy.ts) sits between the in-process handlers
 * and DynamoDB Local, s3rver, the KMS and the PayPal stand-ins, and stalls or
 * drops one kind of call before or after the dependency processed it. After
 * every fault the records are counted in the real stores (directly, not
 * through the proxy): never a duplicate, never a record without its
 * ciphertext or file, and a retry with the same Idempotency-Key answers with
 * the committed record or performs the write once.
 *
 * Answer times are recorded (test-output/fault-timings.json) and never asserted:
 * machines are shared; the figures are read, not enforced.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '#shared/store/keys.ts';
import { BOUNDARY, multipartBody, png, uploadParts } from '../fixtures/documents.ts';
import type { Identity } from '../support/api.ts';
import { call } from '../support/api.ts';
import { runtimeStores } from '../support/documents.ts';
import type { RuntimeStores } from '../support/documents.ts';
import type { Dependency, Fault, FaultProxy, FaultRule } from '../support/fault-proxy.ts';
import { proxyDependencies } from '../support/fault-proxy.ts';
import { lambdaContext, proxyEvent } from '../support/lambda-event.ts';
import type { ProxyHandler } from '../support/lambda-event.ts';
import { CARD, PAYPAL, unique } from '../support/paymethods.ts';

type Route = 'card' | 'paypal' | 'ott' | 'document' | 'session';

/** The call each fault strikes: the commit point (DynamoDB) or the dependency call before it. */
const CALLS = {
  commit: ({ target }) => target === 'DynamoDB_20120810.TransactWriteItems',
  putObject: ({ method, path: url }) => method === 'PUT' && url.includes('/documents/'),
  generateDataKey: ({ target }) => target === 'TrentService.GenerateDataKey',
  agreement: ({ path: url }) => url.startsWith('/v1/billing-agreements/agreements'),
} satisfies Record<string, FaultRule['match']>;

describe('exactly-once creates under stalled and dropped dependencies', () => {
  let stores: RuntimeStores;
  let proxies: Record<Dependency, FaultProxy>;
  let restoreEndpoints: (() => Promise<void>) | undefined;
  const handlers = {} as Record<Route, ProxyHandler>;
  const longest: Record<Dependency, number> = { dynamodb: 0, s3: 0, kms: 0, paypal: 0 };

  beforeAll(async () => {
    stores = runtimeStores(); // applies the runtime's environment; the proxies then take the endpoints over
    ({ proxies, restore: restoreEndpoints } = await proxyDependencies());
    handlers.card = (await import('#functions/paymethods-create-customer.ts')).handler as unknown as ProxyHandler;
    handlers.paypal = (await import('#functions/paymethods-create-location.ts')).handler as unknown as ProxyHandler;
    handlers.ott = (await import('#functions/onetimetokens-create.ts')).handler as unknown as ProxyHandler;
    handlers.document = (await import('#functions/documents-create.ts')).handler as unknown as ProxyHandler;
    handlers.session = (await import('#functions/documents-create-upload.ts')).handler as unknown as ProxyHandler;
  });

  afterAll(async () => {
    await restoreEndpoints?.();
    stores?.destroy();
    const file = path.resolve(import.meta.dirname, '../../test-output/fault-timings.json');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, `${JSON.stringify({ longestAnswerMsWithDependencyStalled: longest }, null, 2)}\n`);
    console.log('longest answer (ms) with each dependency stalled or dropped:', longest);
  });

  /** One place a create lands: its org, location, customer, and how to count what it stored. */
  interface Target {
    route: Route;
    org: Identity;
    loc: string;
    cst: string;
  }

  async function target(route: Route): Promise<Target> {
    // A fresh organization per case: the vault's cached data key would otherwise spare the KMS call.
    return { route, org: await stores.freshOrganization(), loc: unique('loc_'), cst: unique('cst_') };
  }

  function eventFor(at: Target, idempotencyKey: string | undefined) {
    const org = at.org.organizationId;
    const headers = idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : undefined;
    const base = { organizationId: org, method: 'POST' };
    switch (at.route) {
      case 'card':
        return proxyEvent({
          ...base,
          resource: '/v3/organizations/{organization_id}/locations/{location_id}/customers/{customer_token}/paymethods',
          path: `/v3/organizations/${org}/locations/${at.loc}/customers/${at.cst}/paymethods`,
          pathParameters: { organization_id: org, location_id: at.loc, customer_token: at.cst },
          headers,
          body: { card: CARD },
        });
      case 'paypal':
        return proxyEvent({
          ...base,
          resource: '/v3/organizations/{organization_id}/locations/{location_id}/paymethods',
          path: `/v3/organizations/${org}/locations/${at.loc}/paymethods`,
          pathParameters: { organization_id: org, location_id: at.loc },
          headers,
          body: { vendor: PAYPAL },
        });
      case 'ott':
        return proxyEvent({
          ...base,
          resource: '/v3/organizations/{organization_id}/locations/{location_id}/onetimetokens',
          path: `/v3/organizations/${org}/locations/${at.loc}/onetimetokens`,
          pathParameters: { organization_id: org, location_id: at.loc },
          headers,
          body: { card: CARD },
        });
      case 'document':
        return proxyEvent({
          ...base,
          resource: '/v3/organizations/{organization_id}/documents',
          path: `/v3/organizations/${org}/documents`,
          pathParameters: { organization_id: org },
          headers: { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`, ...headers },
          body: multipartBody(uploadParts({ resource: 'application', resource_id: 'app_1' }, { name: 'a.png', contentType: 'image/png', bytes: png }), BOUNDARY),
        });
      case 'session':
        return proxyEvent({
          ...base,
          resource: '/v3/organizations/{organization_id}/documents/uploads',
          path: `/v3/organizations/${org}/documents/uploads`,
          pathParameters: { organization_id: org },
          headers,
          body: { resource: 'application', resource_id: 'app_1', description: 'scan', file_name: 'a.png' },
        });
    }
  }

  async function create(at: Target, idempotencyKey: string | undefined, timedAs?: Dependency) {
    const started = performance.now();
    const result: APIGatewayProxyResult = await handlers[at.route](eventFor(at, idempotencyKey), lambdaContext(at.route));
    const elapsed = performance.now() - started;
    if (timedAs) longest[timedAs] = Math.max(longest[timedAs], Math.round(elapsed));
    const body = JSON.parse(result.body) as Record<string, unknown> & { response: { response_code?: string } };
    return { status: result.statusCode, headers: result.headers ?? {}, body, id: (body.paymethod_token ?? body.one_time_token ?? body.document_id) as string | undefined };
  }

  /**
   * Every record the create left, checked whole: a paymethod or one-time
   * token with its card (the ciphertext), a document with its file. Returns
   * their ids.
   */
  async function recordsOf(at: Target): Promise<string[]> {
    const org = at.org.organizationId;
    if (at.route === 'card' || at.route === 'paypal') {
      const listPath = at.route === 'card' ? `/v3/organizations/${org}/locations/${at.loc}/customers/${at.cst}/paymethods` : `/v3/organizations/${org}/locations/${at.loc}/paymethods`;
      const listed = await call<{ results: Array<{ paymethod_token: string }> }>(listPath, { as: at.org });
      const tokens = listed.body.results.map((result) => result.paymethod_token);
      for (const token of tokens) {
        const { Item } = await stores.documentClient.send(new GetCommand({ TableName: stores.tableName, Key: keys.paymethod(token), ConsistentRead: true }));
        if (at.route === 'card') expect(Item?.vault, `${token} has its ciphertext`).toBeDefined();
        else expect(Item?.vendor, `${token} has its agreement`).toBeDefined();
      }
      return tokens;
    }
    if (at.route === 'ott') {
      const items = await scan('entity = :entity AND location_id = :loc', { ':entity': 'one-time-token', ':loc': at.loc });
      for (const item of items) expect(item.vault, `${String(item.one_time_token)} has its ciphertext`).toBeDefined();
      return items.map((item) => item.one_time_token as string);
    }
    const text = (value: unknown) => (value as { S?: string } | undefined)?.S;
    const items = (await stores.documentItems(org)).map((item) => ({ id: text(item.document_id) as string, status: text(item.status), objectKey: text(item.object_key) }));
    const objects = await stores.objectKeys(org);
    for (const item of items) {
      if (item.status === 'available') expect(objects, `${item.id} has its file`).toContain(item.objectKey);
    }
    return items.map((item) => item.id);
  }

  async function scan(filter: string, values: Record<string, unknown>): Promise<Array<Record<string, unknown>>> {
    const items: Array<Record<string, unknown>> = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await stores.documentClient.send(
        new ScanCommand({ TableName: stores.tableName, FilterExpression: filter, ExpressionAttributeValues: values, ExclusiveStartKey: start, ConsistentRead: true }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
  }

  interface Case {
    route: Route;
    dependency: Dependency;
    fault: Fault;
    match: FaultRule['match'];
  }

  /**
   * The fault, then a retry with the same key once the dependency is back.
   * A fault at the commit point is OUTCOME_UNKNOWN; one before it is a plain
   * 503 and leaves nothing. Either way the retry ends with exactly one record.
   */
  async function faultThenRetry({ route, dependency, fault, match }: Case): Promise<void> {
    const at = await target(route);
    const key = unique('idem-');
    const committing = dependency === 'dynamodb';
    proxies[dependency].set({ fault, match });
    const first = await create(at, key, dependency);
    proxies[dependency].set(undefined);

    expect(first.status, JSON.stringify(first.body)).toBe(503);
    expect(first.headers['Retry-After']).toBe('1');
    expect(first.body.response.response_code).toBe(committing ? 'OUTCOME_UNKNOWN' : 'SERVICE_UNAVAILABLE');
    const afterFault = await recordsOf(at);
    // Processed "after" at the commit point means committed; anywhere else nothing may exist.
    expect(afterFault).toHaveLength(committing && fault.endsWith('after') ? 1 : 0);

    const retry = await create(at, key);
    expect(retry.status, JSON.stringify(retry.body)).toBe(201);
    const records = await recordsOf(at);
    expect(records).toEqual([retry.id]);
    if (afterFault.length === 1) {
      expect(retry.id).toBe(afterFault[0]);
      expect(retry.headers['Idempotent-Replayed']).toBe('true');
    }
    expect((await create(at, key)).id).toBe(retry.id); // and it stays answered
  }

  describe('DynamoDB at the commit point: 503 OUTCOME_UNKNOWN, the key is kept', () => {
    it.each<[Route, Fault]>([
      ['card', 'stall-after'],
      ['card', 'drop-after'],
      ['card', 'drop-before'],
      ['ott', 'stall-after'],
      ['document', 'stall-after'],
      ['document', 'drop-before'],
      ['session', 'drop-after'],
    ])('%s create, %s', (route, fault) => faultThenRetry({ route, dependency: 'dynamodb', fault, match: CALLS.commit }));

    it('20 concurrent retries with one key of a create that stalled before committing make exactly one record', async () => {
      const at = await target('card');
      const key = unique('idem-');
      proxies.dynamodb.set({ fault: 'stall-before', match: CALLS.commit });
      const first = await create(at, key, 'dynamodb');
      proxies.dynamodb.set(undefined);
      expect(first.body.response.response_code).toBe('OUTCOME_UNKNOWN');
      expect(await recordsOf(at)).toEqual([]);

      const retries = await Promise.all(Array.from({ length: 20 }, () => create(at, key)));
      const records = await recordsOf(at);
      expect(records).toHaveLength(1);
      for (const retry of retries) {
        expect([201, 409], JSON.stringify(retry.body)).toContain(retry.status);
        if (retry.status === 201) expect(retry.id).toBe(records[0]);
      }
      expect(retries.some((retry) => retry.status === 201)).toBe(true);
      const settled = await create(at, key);
      expect([settled.status, settled.id]).toEqual([201, records[0]]);
    });

    it('without an Idempotency-Key a stalled commit still says OUTCOME_UNKNOWN, so the client knows a retry may duplicate', async () => {
      const at = await target('card');
      proxies.dynamodb.set({ fault: 'stall-after', match: CALLS.commit });
      const first = await create(at, undefined, 'dynamodb');
      proxies.dynamodb.set(undefined);
      expect([first.status, first.body.response.response_code]).toEqual([503, 'OUTCOME_UNKNOWN']);
      expect(await recordsOf(at)).toHaveLength(1); // it did commit: exactly what "unknown" warns about
    });
  });

  it.each<[Route, Fault]>([
    ['card', 'drop-after'],
    ['document', 'drop-after'],
  ])('%s create whose key claim landed but lost its answer (%s): the SDK retry is the same claim, not another request', async (route, fault) => {
    const at = await target(route);
    const key = unique('idem-');
    let claims = 0;
    // The claim is the first PutItem of a create; only its first attempt loses its answer.
    proxies.dynamodb.set({ fault, match: ({ target: call }) => call === 'DynamoDB_20120810.PutItem' && claims++ === 0 });
    const first = await create(at, key, 'dynamodb');
    const struck = proxies.dynamodb.struck;
    proxies.dynamodb.set(undefined);
    expect(struck).toBe(1);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(await recordsOf(at)).toEqual([first.id]);
    const again = await create(at, key);
    expect([again.status, again.id, again.headers['Idempotent-Replayed']]).toEqual([201, first.id, 'true']);
  });

  it.each<[Route]>([['card'], ['ott']])('%s create whose key claim landed on every attempt and never answered: the retry the 503 invites is not held off', async (route) => {
    const at = await target(route);
    const key = unique('idem-');
    proxies.dynamodb.set({ fault: 'stall-after', match: ({ target: call }) => call === 'DynamoDB_20120810.PutItem' });
    const first = await create(at, key, 'dynamodb');
    proxies.dynamodb.set(undefined);
    expect(first.status, JSON.stringify(first.body)).toBe(503);
    expect(await recordsOf(at)).toEqual([]);
    // Not 409 IDEMPOTENCY_KEY_IN_USE for the rest of the lease: the failed run gave its claim back.
    const retry = await create(at, key);
    expect(retry.status, JSON.stringify(retry.body)).toBe(201);
    expect(await recordsOf(at)).toEqual([retry.id]);
  });

  it('every DynamoDB call stalling still answers 503 within the request deadline, and nothing is stored', async () => {
    const at = await target('card');
    const key = unique('idem-');
    proxies.dynamodb.set({ fault: 'stall-before', match: () => true });
    const first = await create(at, key, 'dynamodb');
    const struck = proxies.dynamodb.struck;
    proxies.dynamodb.set(undefined);
    expect([first.status, first.body.response.response_code]).toEqual([503, 'SERVICE_UNAVAILABLE']); // the key was never claimed: nothing was sent to commit
    expect(struck).toBeGreaterThan(1); // the SDK retried, and stopped
    expect(await recordsOf(at)).toEqual([]);
    const retry = await create(at, key);
    expect(retry.status).toBe(201);
    expect(await recordsOf(at)).toEqual([retry.id]);
  });

  describe('a dependency before the commit point: 503, nothing stored, the key is given back', () => {
    it.each<[Route, Dependency, Fault, FaultRule['match']]>([
      ['card', 'kms', 'stall-before', CALLS.generateDataKey],
      ['ott', 'kms', 'drop-after', CALLS.generateDataKey],
      ['document', 's3', 'stall-after', CALLS.putObject],
      ['document', 's3', 'drop-before', CALLS.putObject],
      ['paypal', 'paypal', 'stall-after', CALLS.agreement],
      ['paypal', 'paypal', 'drop-before', CALLS.agreement],
    ])('%s create, %s %s', (route, dependency, fault, match) => faultThenRetry({ route, dependency, fault, match }));
  });
});
