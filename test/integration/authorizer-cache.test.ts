import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiGatewayEmulator, ApiGatewayEmulatorOptions } from '../../local/api-gateway.ts';
import { startApiGatewayEmulator } from '../../local/api-gateway.ts';
import { FAILED_AUTHENTICATION_LIMIT } from '#shared/domain/authentication.ts';
import { AUTHORIZER_CACHE_TTL_SECONDS } from '#shared/platform/names.ts';
import type { Identity } from '../support/api.ts';
import { authHeaders, UNRELATED, useRuntimeEnvironment } from '../support/api.ts';
import { npmScript } from '../support/cli.ts';
import { fixtureEmulatorOptions } from '../support/emulator.ts';

/**
 * The authorizer's decision cache as API Gateway keeps it (the stage's TTL),
 * on the emulator with the real authorizer and stores: what one address's
 * throttle does to other addresses, and a revocation racing an authorizer run.
 */
const emulatorOptions: ApiGatewayEmulatorOptions = fixtureEmulatorOptions({ authorizerCacheTtlSeconds: AUTHORIZER_CACHE_TTL_SECONDS });

let emulator: ApiGatewayEmulator;
beforeAll(async () => {
  useRuntimeEnvironment();
  emulator = await startApiGatewayEmulator(emulatorOptions);
});
afterAll(() => emulator.close());

/** GET the echo route from a chosen loopback address (the authorizer's sourceIp). */
function getFrom(sourceAddress: string, identity: Identity): Promise<number> {
  const url = new URL(`${emulator.url}/v3/organizations/${identity.organizationId}/echo`);
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port: Number(url.port), path: url.pathname, localAddress: sourceAddress, headers: authHeaders(identity) }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
    request.end();
  });
}

describe('authorizer cache', () => {
  it("keeps a throttled answer to the failed credentials it was for: the valid ones work from that address and any other", async () => {
    const throttled = '127.0.0.23';
    for (let index = 0; index < FAILED_AUTHENTICATION_LIMIT; index += 1) expect(await getFrom(throttled, { ...UNRELATED, accessId: `guess-${index}`, secureKey: 'wrong' })).toBe(401);
    const guess = { ...UNRELATED, secureKey: 'wrong-again' };
    expect(await getFrom(throttled, guess)).toBe(429);
    // Cached for that Authorization header and address: still 429, with no authorizer run.
    expect(await getFrom(throttled, guess)).toBe(429);
    // The owner sends one request through the throttled address (a shared NAT): its headers are its own cache entry,
    // and the authorizer verifies its key without KMS, so it is let through.
    expect(await getFrom(throttled, UNRELATED)).toBe(200);
    expect(await getFrom(throttled, UNRELATED)).toBe(200);
    expect(await getFrom('127.0.0.24', UNRELATED)).toBe(200);
  }, 120_000);

  it('keeps no answer computed across a flush: after a revocation returns, the credential is refused even if a run was in flight', async () => {
    const { stdout } = await npmScript('admin', 'create-credentials', 'org_200');
    const issued = JSON.parse(stdout) as { organization_id: string; api_access_id: string; api_secure_key: string };
    const identity = { organizationId: issued.organization_id, accessId: issued.api_access_id, secureKey: issued.api_secure_key };
    process.env.AUTHORIZER_DELAY_MS = '1500';
    const slow = await startApiGatewayEmulator({ ...emulatorOptions, authorizerHandler: 'authorizer-slow' });
    try {
      const send = () => fetch(`${slow.url}/v3/organizations/org_200/echo`, { headers: authHeaders(identity) }).then((answer) => answer.status);
      const inFlight = send(); // its authorizer run reads the credential, still active, now
      await sleep(700);
      // What `admin revoke-credentials` does: revoke in the store, then flush the authorizer cache.
      const { revokeCredential } = await import('#shared/domain/credentials.ts');
      const { DynamoCredentialStore } = await import('#shared/store/credentials.ts');
      const { dynamo } = await import('#shared/aws/dynamodb.ts');
      const { config } = await import('#shared/runtime/config.ts');
      await revokeCredential(identity.accessId, new DynamoCredentialStore(dynamo, config.tableName));
      slow.flushAuthorizerCache();
      expect(await inFlight).toBe(200); // admitted before the revocation
      expect(await send()).toBe(401);
    } finally {
      delete process.env.AUTHORIZER_DELAY_MS;
      await slow.close();
    }
  }, 60_000);
});
