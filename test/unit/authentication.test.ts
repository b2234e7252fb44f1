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
  const counts = new Map<string, number>();
  const failures: AuthFailureCounter = {
    count: async (ip, window) => counts.get(`${ip}#${window}`) ?? 0,
    add: async (ip, window) => {
      const total = (counts.get(`${ip}#${window}`) ?? 0) + 1;
      counts.set(`${ip}#${window}`, total);
      return total;
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
      // Until the estimate of the last 60 s falls to 29: 2 s into the next minute, these 30 being spread over this one.
      expect(await attempt('203.0.113.7', id as string, key as string, now)).toEqual({ kind: 'throttled', until: Date.parse('2026-05-01T10:01:02Z') / 1000 });
    }
    expect(kms.calls).toBe(FAILED_AUTHENTICATION_LIMIT);

    // Another address is not affected; the throttled one is still throttled at the minute's turn, and counts again after.
    expect(await attempt('198.51.100.1', 'ak_valid', 'right', now)).toMatchObject({ kind: 'secret', caller: { accessId: 'ak_valid' } });
    expect(await attempt('203.0.113.7', 'ak_valid', 'wrong', new Date('2026-05-01T10:01:00Z'))).toMatchObject({ kind: 'throttled' });
    await expect(attempt('203.0.113.7', 'ak_valid', 'wrong', new Date('2026-05-01T10:01:02Z'))).rejects.toBeInstanceOf(NotAuthenticated);
  });

  it(`throttles ${FAILED_AUTHENTICATION_LIMIT} failures within 60 s that straddle two clock minutes, as within one`, async () => {
    const { attempt, kms } = fixture();
    const half = FAILED_AUTHENTICATION_LIMIT / 2;
    for (let index = 0; index < half; index += 1) await expect(attempt('203.0.113.8', 'ak_valid', `a-${index}`, new Date('2026-05-01T10:00:59.500Z'))).rejects.toBeInstanceOf(NotAuthenticated);
    for (let index = 0; index < half; index += 1) await expect(attempt('203.0.113.8', 'ak_valid', `b-${index}`, new Date('2026-05-01T10:01:00.500Z'))).rejects.toBeInstanceOf(NotAuthenticated);
    expect(await attempt('203.0.113.8', 'ak_valid', 'c', new Date('2026-05-01T10:01:01Z'))).toMatchObject({ kind: 'throttled' });
    expect(kms.calls).toBe(FAILED_AUTHENTICATION_LIMIT);
  });

  it('estimates the last 60 s from two windows, and says when the estimate falls below the limit', () => {
    expect(throttledUntil(29, 0, 100, 0.5)).toBeUndefined();
    expect(throttledUntil(30, 0, 100, 0.5)).toBe(101 * 60 + 2);
    // 30 failures in the first second of a minute: the estimate lasts to 2 s into the next one, the window 60 s from now.
    expect(throttledUntil(30, 0, 100, 0.01)).toBe(100 * 60 + 60);
    expect(throttledUntil(30, 0, 100, 0.01)! - (100 + 0.01) * 60).toBeLessThanOrEqual(60);
    // 20 now, 20 in the previous minute, a quarter through this one: 20 + 15 = 35; below 30 once 20 * (1 - f) <= 9.
    expect(throttledUntil(20, 20, 100, 0.25)).toBe(Math.ceil((100 + 0.55) * 60));
    expect(throttledUntil(20, 20, 100, 0.6)).toBeUndefined();
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
