import { createHmac, randomBytes } from 'node:crypto';
import { GenerateMacCommand, KMSClient } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { KmsFingerprinter } from '#shared/aws/kms-fingerprints.ts';

/** KMS GenerateMac as the service computes it, under a key only this test knows. */
function fakeKms() {
  const keyMaterial = randomBytes(32);
  const kms = mockClient(KMSClient);
  kms.on(GenerateMacCommand).callsFake((input: { Message: Uint8Array }) => ({ Mac: createHmac('sha256', keyMaterial).update(input.Message).digest() }));
  return kms;
}

describe('KMS fingerprints', () => {
  const kms = fakeKms();
  afterEach(() => kms.resetHistory());

  it('ask KMS once per organization per container (cold), never again (warm)', async () => {
    const fingerprinter = new KmsFingerprinter(new KMSClient({ region: 'us-east-1' }), 'key');
    const card = { kind: 'card' as const, accountNumber: '4111111111111111' };
    const first = await fingerprinter.fingerprint('org_1', card);
    expect(kms.commandCalls(GenerateMacCommand)).toHaveLength(1);
    // Concurrent first requests share one derivation.
    await Promise.all([1, 2, 3].map(() => fingerprinter.fingerprint('org_2', card)));
    expect(kms.commandCalls(GenerateMacCommand)).toHaveLength(2);
    for (let index = 0; index < 10; index += 1) expect(await fingerprinter.fingerprint('org_1', card)).toBe(first);
    expect(kms.commandCalls(GenerateMacCommand)).toHaveLength(2);
    // The KMS message names the organization and holds no account data.
    const messages = kms.commandCalls(GenerateMacCommand).map((call) => Buffer.from(call.args[0].input.Message as Uint8Array).toString('utf8'));
    expect(messages).toEqual(['payments/paymethod-fingerprint/v1/organization/org_1', 'payments/paymethod-fingerprint/v1/organization/org_2']);
  });

  it('differ across organizations and numbers; an echeck needs the same routing and account number', async () => {
    const fingerprinter = new KmsFingerprinter(new KMSClient({ region: 'us-east-1' }), 'key');
    const card = (accountNumber: string, org = 'org_1') => fingerprinter.fingerprint(org, { kind: 'card', accountNumber });
    const echeck = (routingNumber: string, accountNumber: string) => fingerprinter.fingerprint('org_1', { kind: 'echeck', routingNumber, accountNumber });
    const value = await card('4111111111111111');
    expect(value).toMatch(/^fp_[A-Za-z0-9_-]{43}$/);
    expect(value.length).toBeLessThanOrEqual(64);
    expect(await card('4111111111111111', 'org_2')).not.toBe(value);
    expect(await card('5555555555554444')).not.toBe(value);
    expect(await echeck('021000021', '123456789')).toBe(await echeck('021000021', '123456789'));
    expect(await echeck('021000021', '123456789')).not.toBe(await echeck('011000015', '123456789'));
    // A plain hash of the number is not the fingerprint.
    expect(value).not.toContain(createHmac('sha256', '').update('4111111111111111').digest('base64url'));
  });

  it('retries the derivation after a KMS failure instead of caching it', async () => {
    const failing = mockClient(KMSClient);
    failing.on(GenerateMacCommand).rejectsOnce(new Error('throttled')).resolves({ Mac: randomBytes(32) });
    const fingerprinter = new KmsFingerprinter(new KMSClient({ region: 'us-east-1' }), 'key');
    await expect(fingerprinter.fingerprint('org_1', { kind: 'card', accountNumber: '4111111111111111' })).rejects.toThrow('throttled');
    await expect(fingerprinter.fingerprint('org_1', { kind: 'card', accountNumber: '4111111111111111' })).resolves.toMatch(/^fp_/);
    failing.restore();
  });
});
