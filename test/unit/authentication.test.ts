import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { AuthFailureCounter } from '#shared/domain/authentication.ts';
import { authenticateRequest, FAILED_AUTHENTICATION_LIMIT, RecentlyVerified, throttledUntil } from '#shared/domain/authentication.ts';
import type { CredentialStore, StoredCredential } from '#shared/domain/credentials.ts';
import { LAST_USED_RESOLUTION_MS, listCredentials, revokeCredential } from '#shared/domain/credentials.ts';
import { AUTHORIZER_CACHE_TTL_SECONDS } from '#shared/names.ts';
import { NotAuthenticated, NotFound } from '#shared/domain/errors.ts';

const basic = (id: string, key: string) => `Basic ${Buffer.from(`${id}:${key}`).toString('base64')}`;
const mac = (secret: string) => createHmac('sha256', 'test-key').update(secret).digest();

function fixture() {
  const credentials = new Map<string, StoredCredential>([
    ['ak_valid', { api_access_id: 'ak_valid', organization_id: 'org_1', secret_mac: mac('right'), created_at: '2026-01-01T00:00:00.000Z' }],
    ['ak_other', { api_access_id: 'ak_other', organization_id: 'org_1', secret_mac: mac('other'), created_at: '2026-01-02T00:00:00.000Z' }],
  ]);
  let useWrites = 0;
  const store: CredentialStore = {
    get: async (id) => credentials.get(id),
    create: async () => {},
    listByOrganization: async (org) => [...credentials.values()].filter((c) => c.organization_id === org && c.revoked_at === undefined),
    revoke: async (id, now) => {
      const found = credentials.get(id);
      if (found) found.revoked_at ??= now.toISOString();
      return found !== undefined;
    },
    recordUse: async (id, now, staleBefore) => {
      useWrites += 1;
      const found = credentials.get(id);
      if (found && !(found.last_used_at && found.last_used_at >= staleBefore.toISOString())) found.last_used_at = now.toISOString();
    },
  };
  const counts = new Map<string, Map<number, number>>();
  const failures: AuthFailureCounter = {
    secondsOf: async (ip, window) => [...(counts.get(`${ip}#${window}`) ?? new Map<number, number>())],
    add: async (ip, window, second) => {
      const seconds = counts.get(`${ip}#${window}`) ?? new Map<number, number>();
      seconds.set(second, (seconds.get(second) ?? 0) + 1);
      counts.set(`${ip}#${window}`, seconds);
    },
  };
  const kms = { calls: 0 };
  const deps = {
    credentials: store,
    hasher: { mac: async (secret: string) => ((kms.calls += 1), mac(secret)) },
    publishableKeys: { get: async () => undefined },
    failures,
    verified: new RecentlyVerified(),
  };
  const attempt = (ip: string, id: string, key: string, now: Date) =>
    authenticateRequest({ authorization: basic(id, key), organizationId: 'org_1', sourceIp: ip, publishableAllowed: false }, deps, now);
  return { credentials, deps, kms, attempt, useWrites: () => useWrites };
}

describe('failed-authentication throttle', () => {
  it(`refuses ${FAILED_AUTHENTICATION_LIMIT} failures with 401 (one KMS call each), then throttles that address with no KMS call for about a minute`, async () => {
    const { attempt, kms } = fixture();
    const now = new Date('2026-05-01T10:00:05Z');
    for (let index = 0; index < FAILED_AUTHENTICATION_LIMIT; index += 1) {
      await expect(attempt('203.0.113.7', 'ak_valid', `wrong-${index}`, now)).rejects.toBeInstanceOf(NotAuthenticated);
    }
    expect(kms.calls).toBe(FAILED_AUTHENTICATION_LIMIT);
    for (const [id, key] of [['ak_valid', 'wrong-again'], ['ak_unknown', 'x'], ['ak_other', 'right']]) {
      // Until the 30 failures of 10:00:05 are 60 s old.
      expect(await attempt('203.0.113.7', id as string, key as string, now)).toEqual({ kind: 'throttled', until: Date.parse('2026-05-01T10:01:05Z') / 1000 });
    }
    expect(kms.calls).toBe(FAILED_AUTHENTICATION_LIMIT);

    // Another address is not affected; the throttled one is still throttled a second before, and counts again from then on.
    expect(await attempt('198.51.100.1', 'ak_valid', 'right', now)).toMatchObject({ kind: 'secret', caller: { accessId: 'ak_valid' } });
    expect(await attempt('203.0.113.7', 'ak_valid', 'wrong', new Date('2026-05-01T10:01:04.999Z'))).toMatchObject({ kind: 'throttled' });
    await expect(attempt('203.0.113.7', 'ak_valid', 'wrong', new Date('2026-05-01T10:01:05Z'))).rejects.toBeInstanceOf(NotAuthenticated);
  });

  it('counts exactly the failures of the last 60 s: a burst that ended a minute ago no longer weighs on new ones', async () => {
    const { attempt } = fixture();
    // 30 failures in the last second of a minute: throttled for 60 s.
    for (let index = 0; index < FAILED_AUTHENTICATION_LIMIT; index += 1) await attempt('203.0.113.9', 'ak_valid', `a-${index}`, new Date('2026-05-01T10:00:59.100Z')).catch(() => {});
    expect(await attempt('203.0.113.9', 'ak_valid', 'x', new Date('2026-05-01T10:01:58.900Z'))).toEqual({ kind: 'throttled', until: Date.parse('2026-05-01T10:01:59Z') / 1000 });
    // From 10:01:59 they are out of the window: 30 new failures are all answered 401 (an estimate from the two clock
    // minutes would still weigh the burst and throttle the 30th), then the throttle.
    for (let index = 0; index < FAILED_AUTHENTICATION_LIMIT; index += 1) {
      await expect(attempt('203.0.113.9', 'ak_valid', `b-${index}`, new Date('2026-05-01T10:01:59.500Z'))).rejects.toBeInstanceOf(NotAuthenticated);
    }
    expect(await attempt('203.0.113.9', 'ak_valid', 'c', new Date('2026-05-01T10:01:59.500Z'))).toMatchObject({ kind: 'throttled' });
  });

  it(`throttles ${FAILED_AUTHENTICATION_LIMIT} failures within 60 s that straddle two clock minutes, as within one`, async () => {
    const { attempt, kms } = fixture();
    const half = FAILED_AUTHENTICATION_LIMIT / 2;
    for (let index = 0; index < half; index += 1) await expect(attempt('203.0.113.8', 'ak_valid', `a-${index}`, new Date('2026-05-01T10:00:59.500Z'))).rejects.toBeInstanceOf(NotAuthenticated);
    for (let index = 0; index < half; index += 1) await expect(attempt('203.0.113.8', 'ak_valid', `b-${index}`, new Date('2026-05-01T10:01:00.500Z'))).rejects.toBeInstanceOf(NotAuthenticated);
    expect(await attempt('203.0.113.8', 'ak_valid', 'c', new Date('2026-05-01T10:01:01Z'))).toMatchObject({ kind: 'throttled' });
    expect(kms.calls).toBe(FAILED_AUTHENTICATION_LIMIT);
  });

  it('says when the failures of the last 60 s fall below the limit again', () => {
    expect(throttledUntil([[100, 29]], 100)).toBeUndefined();
    expect(throttledUntil([[100, 30]], 130)).toBe(160);
    // 20 at 100 and 20 at 130: the first 20 leave at 160, leaving 20.
    expect(throttledUntil([[100, 20], [130, 20]], 140)).toBe(160);
    // 10 at 100, 10 at 110, 15 at 120 (35): below 30 once the first 10 leave.
    expect(throttledUntil([[120, 15], [100, 10], [110, 10]], 125)).toBe(160);
    // Failures 60 s old or more, and any not yet happened, do not count.
    expect(throttledUntil([[40, 30]], 100)).toBeUndefined();
    expect(throttledUntil([[41, 30]], 100)).toBe(101);
    expect(throttledUntil([[101, 30]], 100)).toBeUndefined();
  });

  it('lets a credential this container verified recently through from a throttled address, without KMS, unless it was revoked', async () => {
    const { attempt, kms, credentials } = fixture();
    const now = new Date('2026-05-01T10:00:05Z');
    await attempt('203.0.113.7', 'ak_valid', 'right', now);
    for (let index = 0; index < FAILED_AUTHENTICATION_LIMIT; index += 1) await attempt('203.0.113.7', 'ak_unknown', `k${index}`, now).catch(() => {});
    const before = kms.calls;
    expect(await attempt('203.0.113.7', 'ak_valid', 'right', now)).toMatchObject({ kind: 'secret' });
    expect(await attempt('203.0.113.7', 'ak_valid', 'wrong', now)).toMatchObject({ kind: 'throttled' });
    credentials.get('ak_valid')!.revoked_at = now.toISOString();
    expect(await attempt('203.0.113.7', 'ak_valid', 'right', now)).toMatchObject({ kind: 'throttled' });
    expect(kms.calls).toBe(before);
  });
});

describe('credential lifecycle', () => {
  it('stamps last_used_at at most every 30 s, so that with the 30 s authorizer cache it lags a use by a minute at most', async () => {
    expect(AUTHORIZER_CACHE_TTL_SECONDS * 1000 + LAST_USED_RESOLUTION_MS).toBeLessThanOrEqual(60_000);
    const { attempt, credentials, useWrites } = fixture();
    await attempt('192.0.2.1', 'ak_valid', 'right', new Date('2026-05-01T10:00:00Z'));
    await attempt('192.0.2.1', 'ak_valid', 'right', new Date('2026-05-01T10:00:15Z'));
    await attempt('192.0.2.1', 'ak_valid', 'right', new Date('2026-05-01T10:00:29Z'));
    expect(useWrites()).toBe(1);
    expect(credentials.get('ak_valid')?.last_used_at).toBe('2026-05-01T10:00:00.000Z');
    await attempt('192.0.2.1', 'ak_valid', 'right', new Date('2026-05-01T10:00:31Z'));
    expect(useWrites()).toBe(2);
    expect(credentials.get('ak_valid')?.last_used_at).toBe('2026-05-01T10:00:31.000Z');
  });

  it('lists without hashes, revokes so that the credential no longer authenticates nor lists, and refuses unknown ids', async () => {
    const { attempt, deps } = fixture();
    expect((await listCredentials('org_1', deps.credentials)).map((c) => Object.keys(c).sort())).toEqual([
      ['api_access_id', 'created_at', 'last_used_at', 'organization_id'],
      ['api_access_id', 'created_at', 'last_used_at', 'organization_id'],
    ]);
    expect(await revokeCredential('ak_valid', deps.credentials)).toEqual({ api_access_id: 'ak_valid', revoked: true });
    await expect(attempt('192.0.2.1', 'ak_valid', 'right', new Date())).rejects.toBeInstanceOf(NotAuthenticated);
    expect((await listCredentials('org_1', deps.credentials)).map((c) => c.api_access_id)).toEqual(['ak_other']);
    await expect(revokeCredential('ak_missing', deps.credentials)).rejects.toBeInstanceOf(NotFound);
  });
});
