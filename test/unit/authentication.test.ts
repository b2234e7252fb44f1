import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { KMSClient } from '@aws-sdk/client-kms';
import { setImmediate } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { AuthFailureCounter, FailureSubject } from '#shared/domain/authentication.ts';
import { KmsSecretHasher } from '#shared/aws/credential-hasher.ts';
import { authenticateRequest, FAILED_AUTHENTICATION_LIMIT, FAILED_AUTHENTICATION_WINDOW_SECONDS, throttledUntil } from '#shared/domain/authentication.ts';
import type { CredentialStore, StoredCredential } from '#shared/domain/credentials.ts';
import { LAST_USED_RESOLUTION_MS, listCredentials, requireOrganizationNamed, revokeCredential } from '#shared/domain/credentials.ts';
import { AUTHORIZER_CACHE_TTL_SECONDS } from '#shared/platform/names.ts';
import { NotAuthenticated, NotFound } from '#shared/domain/errors.ts';

const basic = (id: string, key: string) => `Basic ${Buffer.from(`${id}:${key}`).toString('base64')}`;
const mac = (secret: string) => createHmac('sha256', 'test-key').update(secret).digest();
const VERSION = 2;

/** An in-memory counter with DynamoDB's semantics: reads see what was added before them, each add is atomic and answers the minute with itself in it. */
function memoryCounter() {
  const minutes = new Map<string, Map<number, number>>();
  const tally = (subject: FailureSubject, minute: number) => [...(minutes.get(`${subject.kind}#${subject.id}#${minute}`) ?? new Map<number, number>())];
  const calls = { reads: 0, adds: 0 };
  const counter: AuthFailureCounter = {
    read: async (subjects, minute) => {
      calls.reads += 1;
      // As a network call would: every attempt in flight reads before any of them adds.
      await setImmediate();
      return subjects.map((subject) => ({ previous: tally(subject, minute - 1), current: tally(subject, minute) }));
    },
    add: async (subjects, minute, second) => {
      calls.adds += 1;
      return subjects.map((subject) => {
        const key = `${subject.kind}#${subject.id}#${minute}`;
        const seconds = minutes.get(key) ?? new Map<number, number>();
        seconds.set(second, (seconds.get(second) ?? 0) + 1);
        minutes.set(key, seconds);
        return tally(subject, minute);
      });
    },
  };
  return { counter, calls };
}

function fixture() {
  const credentials = new Map<string, StoredCredential>([
    ['ak_valid', { api_access_id: 'ak_valid', organization_id: 'org_1', secret_mac: mac('right'), secret_mac_version: VERSION, created_at: '2026-01-01T00:00:00.000Z' }],
    ['ak_other', { api_access_id: 'ak_other', organization_id: 'org_1', secret_mac: mac('other'), secret_mac_version: VERSION, created_at: '2026-01-02T00:00:00.000Z' }],
    // Hashed before versions were stored: its key is right, but it no longer verifies.
    ['ak_legacy', { api_access_id: 'ak_legacy', organization_id: 'org_1', secret_mac: mac('legacy'), created_at: '2025-01-01T00:00:00.000Z' }],
  ]);
  let useWrites = 0;
  const store: CredentialStore = {
    get: async (id) => credentials.get(id),
    create: async () => {},
    listByOrganization: async (org) => [...credentials.values()].filter((c) => c.organization_id === org && c.revoked_at === undefined && c.secret_mac_version !== undefined),
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
  const { counter, calls } = memoryCounter();
  const hashes = { count: 0 };
  const deps = {
    credentials: store,
    hasher: { version: VERSION, mac: async (secret: string) => ((hashes.count += 1), mac(secret)) },
    publishableKeys: { get: async () => undefined },
    failures: counter,
  };
  const attempt = (ip: string, id: string, key: string, now: Date) => authenticateRequest({ authorization: basic(id, key), sourceIp: ip, publishableAllowed: false }, deps, now);
  return { credentials, deps, calls, hashes, attempt, useWrites: () => useWrites };
}

describe('failed-authentication throttle', () => {
  it(`refuses ${FAILED_AUTHENTICATION_LIMIT} failures from one address with 401, then throttles that address, counting nothing more, for about a minute`, async () => {
    const { attempt, calls } = fixture();
    const now = new Date('2026-05-01T10:00:05Z');
    for (let index = 0; index < FAILED_AUTHENTICATION_LIMIT; index += 1) {
      await expect(attempt('203.0.113.7', `ak_guess${index}`, `wrong-${index}`, now)).rejects.toBeInstanceOf(NotAuthenticated);
    }
    expect(calls.adds).toBe(FAILED_AUTHENTICATION_LIMIT);
    for (const [id, key] of [['ak_valid', 'wrong-again'], ['ak_unknown', 'x'], ['ak_legacy', 'legacy']]) {
      // Until the 30 failures of 10:00:05 are 60 s old.
      expect(await attempt('203.0.113.7', id as string, key as string, now)).toEqual({ kind: 'throttled', until: Date.parse('2026-05-01T10:01:05Z') / 1000 });
    }
    expect(calls.adds).toBe(FAILED_AUTHENTICATION_LIMIT);

    // Another address is not affected; the throttled one is still throttled a second before, and counts again from then on.
    await expect(attempt('198.51.100.1', 'ak_valid', 'wrong', now)).rejects.toBeInstanceOf(NotAuthenticated);
    expect(await attempt('203.0.113.7', 'ak_valid', 'wrong', new Date('2026-05-01T10:01:04.999Z'))).toMatchObject({ kind: 'throttled' });
    await expect(attempt('203.0.113.7', 'ak_valid', 'wrong', new Date('2026-05-01T10:01:05Z'))).rejects.toBeInstanceOf(NotAuthenticated);
  });

  it('accepts valid credentials from a throttled address on their first use, without reading a counter', async () => {
    const { attempt, calls, credentials } = fixture();
    const now = new Date('2026-05-01T10:00:05Z');
    for (let index = 0; index <= FAILED_AUTHENTICATION_LIMIT; index += 1) await attempt('203.0.113.7', `ak_guess${index}`, 'x', now).catch(() => {});
    expect(await attempt('203.0.113.7', 'ak_unknown', 'x', now)).toMatchObject({ kind: 'throttled' });
    const reads = calls.reads;
    expect(await attempt('203.0.113.7', 'ak_other', 'other', now)).toEqual({ kind: 'secret', caller: { organizationId: 'org_1', accessId: 'ak_other' } });
    expect(await attempt('203.0.113.7', 'ak_valid', 'right', now)).toEqual({ kind: 'secret', caller: { organizationId: 'org_1', accessId: 'ak_valid' } });
    expect(calls.reads).toBe(reads);
    // A revoked credential is no valid credential.
    credentials.get('ak_valid')!.revoked_at = now.toISOString();
    expect(await attempt('203.0.113.7', 'ak_valid', 'right', now)).toMatchObject({ kind: 'throttled' });
  });

  it(`caps failures naming one access id at ${FAILED_AUTHENTICATION_LIMIT} a minute however many addresses they come from, while its valid key keeps working`, async () => {
    const { attempt } = fixture();
    const now = new Date('2026-05-01T10:00:05Z');
    const address = (index: number) => `198.51.100.${index + 1}`;
    for (let index = 0; index < FAILED_AUTHENTICATION_LIMIT; index += 1) await expect(attempt(address(index), 'ak_valid', `wrong-${index}`, now)).rejects.toBeInstanceOf(NotAuthenticated);
    for (let index = 0; index < 40; index += 1) {
      expect(await attempt(address(FAILED_AUTHENTICATION_LIMIT + index), 'ak_valid', `wrong-again-${index}`, now)).toEqual({ kind: 'throttled', until: Date.parse('2026-05-01T10:01:05Z') / 1000 });
    }
    expect(await attempt('192.0.2.200', 'ak_valid', 'right', now)).toMatchObject({ kind: 'secret' });
    // Another id from the same addresses is counted on its own.
    await expect(attempt(address(0), 'ak_other', 'wrong', now)).rejects.toBeInstanceOf(NotAuthenticated);
  });

  it('lets exactly 30 of 100 parallel wrong keys be 401: the failure that takes a count past the limit is throttled itself', async () => {
    const { attempt, calls } = fixture();
    const now = new Date('2026-05-01T10:00:05Z');
    const outcomes = await Promise.all(
      Array.from({ length: 100 }, (_, index) =>
        attempt('203.0.113.50', 'ak_valid', `wrong-${index}`, now).then(
          (decision) => decision.kind,
          (error: unknown) => (error instanceof NotAuthenticated ? 'unauthorized' : 'error'),
        ),
      ),
    );
    // Every attempt read before any added: a read-then-add counter would have let all 100 through.
    expect(calls.reads).toBe(100);
    expect(outcomes.filter((kind) => kind === 'unauthorized')).toHaveLength(FAILED_AUTHENTICATION_LIMIT);
    expect(outcomes.filter((kind) => kind === 'throttled')).toHaveLength(100 - FAILED_AUTHENTICATION_LIMIT);
  });

  it('counts exactly the failures of the last 60 s: a burst that ended a minute ago no longer weighs on new ones', async () => {
    const { attempt } = fixture();
    // 30 failures in the last second of a minute: throttled for 60 s.
    for (let index = 0; index < FAILED_AUTHENTICATION_LIMIT; index += 1) await attempt('203.0.113.9', `ak_a${index}`, 'x', new Date('2026-05-01T10:00:59.100Z')).catch(() => {});
    expect(await attempt('203.0.113.9', 'ak_valid', 'x', new Date('2026-05-01T10:01:58.900Z'))).toEqual({ kind: 'throttled', until: Date.parse('2026-05-01T10:01:59Z') / 1000 });
    // From 10:01:59 they are out of the window: 30 new failures are all answered 401 (an estimate from the two clock
    // minutes would still weigh the burst and throttle the 30th), then the throttle.
    for (let index = 0; index < FAILED_AUTHENTICATION_LIMIT; index += 1) {
      await expect(attempt('203.0.113.9', `ak_b${index}`, 'x', new Date('2026-05-01T10:01:59.500Z'))).rejects.toBeInstanceOf(NotAuthenticated);
    }
    expect(await attempt('203.0.113.9', 'ak_c', 'x', new Date('2026-05-01T10:01:59.500Z'))).toMatchObject({ kind: 'throttled' });
  });

  it(`throttles ${FAILED_AUTHENTICATION_LIMIT} failures within 60 s that straddle two clock minutes, as within one`, async () => {
    const { attempt } = fixture();
    const half = FAILED_AUTHENTICATION_LIMIT / 2;
    for (let index = 0; index < half; index += 1) await expect(attempt('203.0.113.8', 'ak_valid', `a-${index}`, new Date('2026-05-01T10:00:59.500Z'))).rejects.toBeInstanceOf(NotAuthenticated);
    for (let index = 0; index < half; index += 1) await expect(attempt('203.0.113.8', 'ak_valid', `b-${index}`, new Date('2026-05-01T10:01:00.500Z'))).rejects.toBeInstanceOf(NotAuthenticated);
    expect(await attempt('203.0.113.8', 'ak_valid', 'c', new Date('2026-05-01T10:01:01Z'))).toMatchObject({ kind: 'throttled' });
  });

  it('counts a publishable key on a route that takes none, and a header that is no credential, against the address only', async () => {
    const { deps, attempt } = fixture();
    const now = new Date('2026-05-01T10:00:05Z');
    for (let index = 0; index < FAILED_AUTHENTICATION_LIMIT; index += 1) {
      const authorization = index % 2 ? `Bearer pk_${'a'.repeat(32)}` : 'Basic ***';
      await expect(authenticateRequest({ authorization, sourceIp: '203.0.113.60', publishableAllowed: false }, deps, now)).rejects.toBeInstanceOf(NotAuthenticated);
    }
    expect(await authenticateRequest({ authorization: undefined, sourceIp: '203.0.113.60', publishableAllowed: true }, deps, now)).toMatchObject({ kind: 'throttled' });
    expect(await attempt('203.0.113.60', 'ak_valid', 'right', now)).toMatchObject({ kind: 'secret' });
    await expect(attempt('203.0.113.61', 'ak_valid', 'wrong', now)).rejects.toBeInstanceOf(NotAuthenticated);
  });

  it('never verifies a credential hashed before versions were stored, even with its right key', async () => {
    const { attempt } = fixture();
    await expect(attempt('192.0.2.1', 'ak_legacy', 'legacy', new Date())).rejects.toBeInstanceOf(NotAuthenticated);
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
});

describe('the organization a request names', () => {
  const caller = { organizationId: 'org_1', accessId: 'ak_valid' };
  it("is the caller's, in either header or in both with one value", () => {
    expect(() => requireOrganizationNamed(caller, ['org_1', undefined])).not.toThrow();
    expect(() => requireOrganizationNamed(caller, [undefined, 'org_1'])).not.toThrow();
    expect(() => requireOrganizationNamed(caller, ['org_1', 'org_1'])).not.toThrow();
  });
  it('is 401 when missing, another organization, or two different values', () => {
    for (const named of [[undefined, undefined], ['org_2', undefined], [undefined, 'org_2'], ['org_1', 'org_2'], ['org_2', 'org_1'], ['', undefined], ['org_1', '']]) {
      expect(() => requireOrganizationNamed(caller, named), JSON.stringify(named)).toThrow(NotAuthenticated);
    }
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

describe('the figures the operator docs state about the throttle', () => {
  const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
  const section = operations.slice(operations.indexOf('### Failed-authentication throttle'), operations.indexOf('**WAF (optional, off by default).**'));
  const decisions = readFileSync(new URL('../../docs/api-decisions.md', import.meta.url), 'utf8');

  it('are the code\'s: the cap, its window, the authorizer cache and the hash version', () => {
    const limit = FAILED_AUTHENTICATION_LIMIT;
    expect(section).toContain(`each at ${limit} within ${FAILED_AUTHENTICATION_WINDOW_SECONDS} seconds`);
    expect(section).toContain(`after ${limit}\n  failures from one address`);
    expect(section).toContain(`after ${limit} failures naming\n  one access id`);
    expect(section).toContain(`the last ${FAILED_AUTHENTICATION_WINDOW_SECONDS}\nseconds already hold ${limit} failures`);
    expect(section).toContain(`expires (${AUTHORIZER_CACHE_TTL_SECONDS} s at most)`);
    expect(section).toContain(`\`secret_mac_version\` (${new KmsSecretHasher(new KMSClient({ region: 'us-east-1' }), 'key').version})`);
    expect(decisions).toContain(`After ${limit} failed authentications from one source address within\n${FAILED_AUTHENTICATION_WINDOW_SECONDS} seconds`);
    expect(decisions).toContain(`after ${limit} failures\nnaming one \`api_access_id\``);
  });

  it('count the calls a failure makes as the counter makes them: up to 4 items read, one write per subject', async () => {
    const { deps, attempt } = fixture();
    const reads: number[] = [];
    const writes: number[] = [];
    const counter = deps.failures;
    deps.failures = {
      read: async (subjects, minute) => (reads.push(subjects.length * 2), counter.read(subjects, minute)),
      add: async (subjects, minute, second) => (writes.push(subjects.length), counter.add(subjects, minute, second)),
    };
    await attempt('192.0.2.9', 'ak_valid', 'wrong', new Date()).catch(() => {});
    expect({ reads, writes }).toEqual({ reads: [4], writes: [2] });
    expect(section).toContain('one BatchGetItem of up to 4 items and one UpdateItem\nper subject (2 with an access id)');
  });
});
