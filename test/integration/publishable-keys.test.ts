import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { ApiAnswer } from '../support/api.ts';
import { authHeaders, call, MERCHANT, PARTNER } from '../support/api.ts';
import { CARD, CARD_NUMBER, ECHECK, expectError, locationPath, post, unique } from '../support/paymethods.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const ORG = MERCHANT.organizationId;
const SHOP = 'https://shop.example';

interface IssuedKey {
  publishable_key: string;
  organization_id: string;
  location_id: string;
  allowed_origins: string[];
}

/** Through the admin CLI, as an operator would. */
async function createKey(organizationId: string, locationId: string, ...options: string[]): Promise<IssuedKey> {
  const { stdout } = await run('npm', ['run', '--silent', 'admin', '--', 'create-publishable-key', organizationId, locationId, ...options], {
    cwd: repoRoot,
    env: { ...process.env, PORT: String(inject('runtimePort')) },
  });
  return JSON.parse(stdout) as IssuedKey;
}

function publishableHeaders(key: IssuedKey, origin: string | undefined, organizationId = key.organization_id): Record<string, string> {
  return { Authorization: `Bearer ${key.publishable_key}`, 'X-Service-Auth-Organization-Id': organizationId, ...(origin ? { Origin: origin } : {}) };
}

async function mint(key: IssuedKey, body: unknown = { card: CARD }, options: { origin?: string; path?: string; organizationId?: string } = {}): Promise<ApiAnswer> {
  const target = options.path ?? `${locationPath(key.organization_id, key.location_id)}/onetimetokens`;
  const origin = 'origin' in options ? options.origin : SHOP;
  return call(target, { method: 'POST', as: null, body, headers: publishableHeaders(key, origin, options.organizationId) });
}

describe('publishable keys', () => {
  let key: IssuedKey;
  beforeAll(async () => {
    key = await createKey(ORG, unique('loc_'), '--origin', SHOP, '--origin', 'http://localhost:8080');
  }, 60_000);

  it('are issued by the admin CLI, bound to an organization, a location and normalized origins', () => {
    expect(Object.keys(key).sort()).toEqual(['allowed_origins', 'location_id', 'organization_id', 'publishable_key']);
    expect(key.publishable_key).toMatch(/^pk_[A-Za-z0-9]{32}$/);
    expect(key.allowed_origins).toEqual([SHOP, 'http://localhost:8080']);
  });

  it('mint a one-time token from an allowed origin, readable by that origin only (CORS echoes it)', async () => {
    const answer = await mint(key);
    expect(answer.status, answer.text).toBe(201);
    expect(answer.body.one_time_token).toMatch(/^ott_/);
    expect(answer.headers.get('access-control-allow-origin')).toBe(SHOP);
    expect(answer.headers.get('vary')).toBe('Origin');
    expect(answer.text).not.toContain(CARD_NUMBER);
  });

  it('mint tokens the merchant turns into a paymethod with its secret credentials', async () => {
    const minted = await mint(key, { echeck: ECHECK });
    expect(minted.status, minted.text).toBe(201);
    const created = await post(`${locationPath(ORG, key.location_id)}/paymethods`, { echeck: { one_time_token: minted.body.one_time_token, account_holder: 'Ann Lee' } });
    expect(created.status, created.text).toBe(201);
    expect((created.body.echeck as Record<string, unknown>).masked_account_number).toBe('****1012');
  });

  it('are refused from an origin not on the list, or without an Origin, with 403 and no CORS headers', async () => {
    for (const origin of ['https://evil.example', 'https://shop.example.evil.example', 'http://shop.example', 'null', undefined]) {
      const answer = await mint(key, { card: CARD }, { origin });
      expect(answer.status, String(origin)).toBe(403);
      expectError(answer, 403);
      expect(answer.body.response).toMatchObject({ response_code: 'FORBIDDEN' });
      expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it("mint only at the key's own location and organization (403), under the key's organization header (401)", async () => {
    expectError(await mint(key, { card: CARD }, { path: `${locationPath(ORG, unique('loc_'))}/onetimetokens` }), 403);
    // A partner's reach over its merchants is for secret credentials only.
    const partnerKey = await createKey(PARTNER.organizationId, key.location_id, '--origin', SHOP);
    expectError(await mint(partnerKey, { card: CARD }, { path: `${locationPath(ORG, key.location_id)}/onetimetokens` }), 403);
    expectError(await mint(key, { card: CARD }, { organizationId: PARTNER.organizationId }), 401);
  });

  it('are 401 on every route that does not declare them', async () => {
    const headers = publishableHeaders(key, SHOP);
    const paths: Array<[string, string]> = [
      ['GET', `/v3/organizations/${ORG}/paymethods`],
      ['GET', `${locationPath(ORG, key.location_id)}/paymethods`],
      ['POST', `${locationPath(ORG, key.location_id)}/paymethods`],
      // Reading a token back is for servers, even at the key's own location.
      ['GET', `${locationPath(ORG, key.location_id)}/onetimetokens/ott_${'a'.repeat(22)}`],
    ];
    for (const [method, target] of paths) {
      const answer = await call(target, { method, as: null, headers, ...(method === 'POST' ? { body: { card: CARD } } : {}) });
      expectError(answer, 401);
      expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('are checked like paymethod creation: a bad number is 400 naming the field, and no token exists', async () => {
    const answer = await mint(key, { card: { ...CARD, account_number: '4111111111111112', expire_month: 13 } });
    expectError(answer, 400, ['card.account_number', 'card.expire_month']);
    expect(answer.body.one_time_token).toBeUndefined();
    // The browser may read the refusal, to show it next to the field.
    expect(answer.headers.get('access-control-allow-origin')).toBe(SHOP);
  });

  it('take at most 4 KB of body (413)', async () => {
    const answer = await mint(key, { card: { ...CARD, name_on_card: 'x'.repeat(5000) } });
    expectError(answer, 413);
    expect(answer.body.response).toMatchObject({ response_code: 'PAYLOAD_TOO_LARGE' });
  });

  it('are limited per key per minute, counting refused attempts too (429 with Retry-After)', async () => {
    // The window is a clock minute: a run that straddles a minute's end is run again.
    for (let attempt = 1; attempt <= 2; attempt += 1) {
      const limited = await createKey(ORG, unique('loc_'), '--origin', SHOP, '--mints-per-minute', '3');
      const minute = Math.floor(Date.now() / 60_000);
      const answers = [];
      for (const body of [{ card: CARD }, { card: { ...CARD, account_number: '1' } }, { card: CARD }, { card: CARD }]) answers.push(await mint(limited, body));
      if (Math.floor(Date.now() / 60_000) !== minute && attempt === 1) continue;
      expect(answers.map((answer) => answer.status)).toEqual([201, 400, 201, 429]);
      const throttled = answers[3]!;
      expect(throttled.body.response).toMatchObject({ response_code: 'THROTTLED' });
      expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(throttled.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      expect(throttled.headers.get('access-control-allow-origin')).toBe(SHOP);
      // Secret credentials are not subject to the per-key budget.
      expect((await post(`${locationPath(ORG, limited.location_id)}/onetimetokens`, { card: CARD })).status).toBe(201);
      return;
    }
  });

  it('are refused by the admin CLI for bad origins, unknown organizations and missing origins', async () => {
    const failing = async (...args: string[]) => {
      try {
        await createKey(ORG, 'loc_1', ...args);
        return undefined;
      } catch (error) {
        return error as { code: number; stderr: string };
      }
    };
    const badOrigin = await failing('--origin', 'http://shop.example', '--origin', 'https://shop.example/checkout');
    expect(JSON.parse(badOrigin?.stderr ?? '{}').errors.map((issue: { field: string }) => issue.field)).toEqual(['allowed_origins[0]', 'allowed_origins[1]']);
    expect((await failing())?.code).toBe(2);
    const unknown = await run('npm', ['run', '--silent', 'admin', '--', 'create-publishable-key', 'org_missing', 'loc_1', '--origin', SHOP], {
      cwd: repoRoot,
      env: { ...process.env, PORT: String(inject('runtimePort')) },
    }).catch((error: { stderr: string }) => error);
    expect(JSON.parse((unknown as { stderr: string }).stderr)).toMatchObject({ error: 'NOT_FOUND' });
  });
});

describe('CORS', () => {
  let key: IssuedKey;
  beforeAll(async () => {
    key = await createKey(ORG, unique('loc_'), '--origin', SHOP);
  }, 60_000);
  const preflight = (target: string, origin: string) =>
    call(target, { method: 'OPTIONS', as: null, headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,content-type,x-service-auth-organization-id' } });

  it("answers the minting route's preflight for an origin a key of the location allows", async () => {
    const answer = await preflight(`${locationPath(ORG, key.location_id)}/onetimetokens`, SHOP);
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe(SHOP);
    expect(answer.headers.get('access-control-allow-methods')).toBe('POST');
    expect(answer.headers.get('access-control-allow-headers')?.toLowerCase().split(/,\s*/).sort()).toEqual(['authorization', 'content-type', 'idempotency-key', 'x-forte-auth-organization-id', 'x-service-auth-organization-id']);
    expect(answer.headers.get('access-control-max-age')).toBe('600');
    expect(answer.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('refuses the preflight for other origins and for locations without keys (403, no CORS headers)', async () => {
    for (const [loc, origin] of [[key.location_id, 'https://evil.example'], [unique('loc_'), SHOP]] as const) {
      const answer = await preflight(`${locationPath(ORG, loc)}/onetimetokens`, origin);
      expectError(answer, 403);
      expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('sends no CORS headers on any other route, to secret callers, or to preflights elsewhere', async () => {
    const listing = await call(`/v3/organizations/${ORG}/paymethods`, { headers: { Origin: SHOP } });
    expect(listing.status).toBe(200);
    const minted = await call(`${locationPath(ORG, key.location_id)}/onetimetokens`, { method: 'POST', body: { card: CARD }, headers: { Origin: SHOP } });
    expect(minted.status).toBe(201);
    const elsewhere = await preflight(`${locationPath(ORG, key.location_id)}/paymethods`, SHOP);
    expect(elsewhere.status).toBe(405);
    for (const answer of [listing, minted, elsewhere]) {
      for (const name of answer.headers.keys()) expect(name).not.toMatch(/^access-control-/);
    }
  });
});

describe('GET /v3/js/tokenize.js', () => {
  it('serves the library as a cacheable ES module with an ETag, 304 when unchanged', async () => {
    const first = await call('/v3/js/tokenize.js', { as: null });
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(first.headers.get('cache-control')).toBe('public, max-age=300');
    expect(first.text).toMatch(/export\s*\{/);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    const again = await call('/v3/js/tokenize.js', { as: null, headers: { 'If-None-Match': etag! } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });

  it('serves its content-hash version as immutable', async () => {
    const { headers } = await call('/v3/js/tokenize.js', { as: null });
    const version = headers.get('etag')!.slice(1, 13);
    const pinned = await call(`/v3/js/tokenize.js?v=${version}`, { as: null });
    expect(pinned.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const stale = await call('/v3/js/tokenize.js?v=000000000000', { as: null });
    expect(stale.headers.get('cache-control')).toBe('public, max-age=300');
  });

  it('needs no credentials and ignores any', async () => {
    expect((await call('/v3/js/tokenize.js', { headers: authHeaders(MERCHANT) })).status).toBe(200);
  });
});
