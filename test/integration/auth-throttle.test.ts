import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { KMSClient } from '@aws-sdk/client-kms';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applySeed } from '../../local/seed.ts';
import { KmsSecretHasher } from '#shared/aws/credential-hasher.ts';
import { FAILED_AUTHENTICATION_LIMIT } from '#shared/domain/authentication.ts';
import { DynamoCredentialStore } from '#shared/store/credentials.ts';
import { keys } from '#shared/store/keys.ts';
import { DynamoOrganizationStore } from '#shared/store/organizations.ts';
import type { Identity } from '../support/api.ts';
import { baseUrl } from '../support/api.ts';
import type { RuntimeStores } from '../support/documents.ts';
import { runtimeStores } from '../support/documents.ts';

/**
 * The failed-authentication throttle through the local runtime, as a client
 * sees it: source addresses are real (each request leaves from its own
 * loopback address, which the emulator hands the authorizer as
 * `identity.sourceIp`, as API Gateway hands it the TCP peer), and KMS calls
 * are counted by the KMS stand-in. Each case uses addresses and credentials of
 * its own, so the counters it fills are its own.
 */
const OVERSHOOT = 5;

let stores: RuntimeStores;
let kmsUrl: string;
beforeAll(() => {
  stores = runtimeStores();
  kmsUrl = process.env.AWS_ENDPOINT_URL_KMS as string;
});
afterAll(() => stores.destroy());

const macCalls = async () => ((await (await fetch(`${kmsUrl}/__standin/calls`)).json()) as Record<string, number>).GenerateMac ?? 0;

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: string;
}

/** GET a route from a chosen loopback address, with the given credentials (a new connection each time: the address is the connection's). */
function getFrom(sourceAddress: string, identity: Identity, headers: Record<string, string> = { 'X-Service-Auth-Organization-Id': identity.organizationId }): Promise<Answer> {
  const url = new URL(`${baseUrl()}/v3/organizations/${identity.organizationId}/paymethods`);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port: Number(url.port),
        path: url.pathname,
        localAddress: sourceAddress,
        agent: false,
        headers: { Authorization: `Basic ${Buffer.from(`${identity.accessId}:${identity.secureKey}`).toString('base64')}`, ...headers },
      },
      (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'], body }));
      },
    );
    request.on('error', reject);
    request.end();
  });
}

const count = (answers: readonly Answer[], status: number) => answers.filter((answer) => answer.status === status).length;

describe('failed-authentication throttle, through the local runtime', () => {
  it(`answers 100 parallel wrong keys for one real access id with at most ${FAILED_AUTHENTICATION_LIMIT} + ${OVERSHOOT} of 401, the rest 429, and no KMS call per attempt`, async () => {
    const owner = await stores.freshOrganization();
    // A warm authorizer, as the attack would find it: its module loaded and its hashing key derived.
    expect((await getFrom('127.0.3.2', owner)).status).toBe(200);
    const before = await macCalls();
    const answers = await Promise.all(Array.from({ length: 100 }, (_, index) => getFrom('127.0.3.1', { ...owner, secureKey: `wrong-${index}` })));
    const kmsCalls = (await macCalls()) - before;
    console.info(`100 parallel wrong keys: ${count(answers, 401)} x 401, ${count(answers, 429)} x 429, ${count(answers, 503)} x 503, ${kmsCalls} KMS GenerateMac calls`);
    // On a machine loaded far past its cores, some of 100 authorizer runs sharing one process can pass the authorizer's
    // 2 s budget (503, the answer to a stalled authorizer); none may let a guess through.
    expect(count(answers, 401) + count(answers, 429) + count(answers, 503)).toBe(100);
    expect(count(answers, 503)).toBeLessThan(50);
    expect(count(answers, 401)).toBeLessThanOrEqual(FAILED_AUTHENTICATION_LIMIT + OVERSHOOT);
    if (count(answers, 503) === 0) expect(count(answers, 401)).toBeGreaterThanOrEqual(FAILED_AUTHENTICATION_LIMIT);
    // At most the authorizer's one derivation of its hashing key (and whatever other tests ask meanwhile): never one per attempt.
    expect(kmsCalls).toBeLessThanOrEqual(FAILED_AUTHENTICATION_LIMIT + OVERSHOOT);
    for (const answer of answers.filter(({ status }) => status === 429)) {
      expect(JSON.parse(answer.body).response.response_code).toBe('THROTTLED');
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(answer.retryAfter)).toBeLessThanOrEqual(60);
    }
    // The owner's key still works, from that address and any other.
    expect((await getFrom('127.0.3.1', owner)).status).toBe(200);
    expect((await getFrom('127.0.3.2', owner)).status).toBe(200);
  });

  it(`caps failures naming one access id across 40 addresses at ${FAILED_AUTHENTICATION_LIMIT} (+${OVERSHOOT}), none of them blocked, while its valid key works from each`, async () => {
    const target = await stores.freshOrganization();
    const addresses = Array.from({ length: 40 }, (_, index) => `127.0.4.${index + 1}`);
    const perAddress = FAILED_AUTHENTICATION_LIMIT - 1;
    const before = await macCalls();
    const startedAt = performance.now();
    // Each address sends its 29 in turn; the 40 addresses at once.
    const answers = (
      await Promise.all(
        addresses.map(async (address) => {
          const own: Answer[] = [];
          for (let attempt = 0; attempt < perAddress; attempt += 1) own.push(await getFrom(address, { ...target, secureKey: `wrong-${address}-${attempt}` }));
          return own;
        }),
      )
    ).flat();
    const elapsedSeconds = (performance.now() - startedAt) / 1000;
    const kmsCalls = (await macCalls()) - before;
    console.info(`40 addresses x ${perAddress} failures in ${elapsedSeconds.toFixed(1)} s: ${count(answers, 401)} x 401, ${count(answers, 429)} x 429, ${count(answers, 503)} x 503, ${kmsCalls} KMS GenerateMac calls`);
    // All within one 60 s window, so the cap is the only thing that can have stopped them.
    expect(elapsedSeconds).toBeLessThan(55);
    expect(count(answers, 401) + count(answers, 429) + count(answers, 503)).toBe(addresses.length * perAddress);
    expect(count(answers, 503)).toBeLessThan(addresses.length * perAddress * 0.1);
    expect(count(answers, 401)).toBeLessThanOrEqual(FAILED_AUTHENTICATION_LIMIT + OVERSHOOT);
    if (count(answers, 503) === 0) expect(count(answers, 401)).toBeGreaterThanOrEqual(FAILED_AUTHENTICATION_LIMIT);
    expect(kmsCalls).toBeLessThanOrEqual(FAILED_AUTHENTICATION_LIMIT + OVERSHOOT);
    // Its valid key works from every one of them; a wrong one is 429 from a new address too.
    for (const address of addresses.slice(0, 5)) expect((await getFrom(address, target)).status).toBe(200);
    expect((await getFrom('127.0.4.200', { ...target, secureKey: 'wrong-again' })).status).toBe(429);
    // The addresses were never blocked: another id's wrong key from them is 401, not 429.
    expect((await getFrom(addresses[0] as string, { ...target, accessId: 'ak_someoneelse', secureKey: 'x' })).status).toBe(401);
  });

  it('accepts valid credentials never used before from a blocked address, on the first request', async () => {
    const blocked = '127.0.5.1';
    const stranger = { organizationId: 'org_300', accessId: 'ak_nobody', secureKey: 'x' };
    for (let attempt = 0; attempt < FAILED_AUTHENTICATION_LIMIT; attempt += 1) {
      expect((await getFrom(blocked, { ...stranger, accessId: `ak_nobody${attempt}` })).status).toBe(401);
    }
    expect((await getFrom(blocked, stranger)).status).toBe(429);
    const blockedAt = performance.now();
    const fresh = await stores.freshOrganization();
    const issuedAt = performance.now();
    const first = await getFrom(blocked, fresh);
    const answeredAt = performance.now();
    console.info(`blocked address to 200 with valid credentials: the first request, ${Math.round(answeredAt - issuedAt)} ms (${Math.round(answeredAt - blockedAt)} ms after the 429, issuing the credential included)`);
    expect(first.status).toBe(200);
    // Still blocked for anything else, and a wrong key for the new credential is not let through.
    expect((await getFrom(blocked, { ...fresh, secureKey: 'wrong' })).status).toBe(429);
    expect((await getFrom(blocked, stranger)).status).toBe(429);
  });
});

describe('organization headers', () => {
  const merchant = { organizationId: 'org_200', accessId: 'merchant-id', secureKey: 'merchant-key' };

  it("takes X-Forte-Auth-Organization-Id as X-Service-Auth-Organization-Id, and both with one value; both with different values is 401", async () => {
    expect((await getFrom('127.0.0.1', merchant, { 'X-Forte-Auth-Organization-Id': 'org_200' })).status).toBe(200);
    expect((await getFrom('127.0.0.1', merchant, { 'X-Forte-Auth-Organization-Id': 'org_200', 'X-Service-Auth-Organization-Id': 'org_200' })).status).toBe(200);
    for (const headers of [
      { 'X-Forte-Auth-Organization-Id': 'org_100', 'X-Service-Auth-Organization-Id': 'org_200' },
      { 'X-Forte-Auth-Organization-Id': 'org_200', 'X-Service-Auth-Organization-Id': 'org_100' },
      { 'X-Forte-Auth-Organization-Id': 'org_300' },
      {} as Record<string, string>,
    ]) {
      const answer = await getFrom('127.0.0.1', merchant, headers);
      expect(answer.status, JSON.stringify(headers)).toBe(401);
      expect(JSON.parse(answer.body).response.response_code).toBe('UNAUTHORIZED');
    }
  });
});

describe('credentials hashed before secret_mac_version', () => {
  it('no longer authenticate; seeding the same id and key again replaces them, so a kept local data folder keeps its seeded credentials working', async () => {
    const organizations = new DynamoOrganizationStore(stores.documentClient, stores.tableName);
    const credentials = new DynamoCredentialStore(stores.documentClient, stores.tableName);
    const owner = await stores.freshOrganization();
    const legacy = { organizationId: owner.organizationId, accessId: `legacy-${owner.accessId}`, secureKey: 'legacy-key' };
    await stores.documentClient.send(
      new PutCommand({
        TableName: stores.tableName,
        Item: {
          ...keys.credential(legacy.accessId),
          ...keys.credentialByOrganization(legacy.organizationId, '2025-01-01T00:00:00.000Z', legacy.accessId),
          api_access_id: legacy.accessId,
          organization_id: legacy.organizationId,
          secret_mac: new Uint8Array(32),
          created_at: '2025-01-01T00:00:00.000Z',
        },
      }),
    );
    expect((await getFrom('127.0.6.1', legacy)).status).toBe(401);
    const kms = new KMSClient({ region: process.env.AWS_REGION, endpoint: process.env.AWS_ENDPOINT_URL_KMS });
    try {
      const seed = { organizations: [{ organization_id: legacy.organizationId, credentials: [{ api_access_id: legacy.accessId, api_secure_key: legacy.secureKey }] }] };
      const issued = await applySeed(seed, { organizations, credentials, hasher: new KmsSecretHasher(kms, process.env.CREDENTIAL_MAC_KEY_ID as string) });
      expect(issued.map((credential) => credential.api_access_id)).toEqual([legacy.accessId]);
    } finally {
      kms.destroy();
    }
    expect((await getFrom('127.0.6.1', legacy)).status).toBe(200);
    expect((await credentials.get(legacy.accessId))?.secret_mac_version).toBe(2);
  });
});
