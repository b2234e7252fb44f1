import { createHmac, randomBytes } from 'node:crypto';
import { GenerateMacCommand, KMSClient } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { KmsSecretHasher } from '#shared/aws/credential-hasher.ts';

describe('KMS secure-key hashes', () => {
  it('ask KMS once per process for the hashing key, never per secure key, and are HMAC-SHA-256 under it', async () => {
    const keyMaterial = randomBytes(32);
    const kms = mockClient(KMSClient);
    kms.on(GenerateMacCommand).callsFake((input: { Message: Uint8Array }) => ({ Mac: createHmac('sha256', keyMaterial).update(input.Message).digest() }));
    const hasher = new KmsSecretHasher(new KMSClient({ region: 'us-east-1' }), 'key');
    // Concurrent first hashes share one derivation.
    const [first] = await Promise.all(['sk_a', 'sk_b', 'sk_c'].map((secret) => hasher.mac(secret)));
    for (let index = 0; index < 100; index += 1) await hasher.mac(`sk_wrong${index}`);
    expect(kms.commandCalls(GenerateMacCommand)).toHaveLength(1);
    // The KMS message is the fixed, versioned label: no secure key ever reaches KMS.
    const message = Buffer.from(kms.commandCalls(GenerateMacCommand)[0]!.args[0].input.Message as Uint8Array).toString('utf8');
    expect(message).toBe('payments/credential-secret-mac/v2');
    const derived = createHmac('sha256', keyMaterial).update(message).digest();
    expect(Buffer.from(first!)).toEqual(createHmac('sha256', derived).update('sk_a').digest());
    // Not the version-1 hash (KMS over the secure key itself).
    expect(Buffer.from(first!)).not.toEqual(createHmac('sha256', keyMaterial).update('sk_a').digest());
    expect(hasher.version).toBe(2);
    kms.restore();
  });

  it('asks KMS again after a failed derivation instead of keeping the failure', async () => {
    const failing = mockClient(KMSClient);
    failing.on(GenerateMacCommand).rejectsOnce(new Error('throttled')).resolves({ Mac: randomBytes(32) });
    const hasher = new KmsSecretHasher(new KMSClient({ region: 'us-east-1' }), 'key');
    await expect(hasher.mac('sk_a')).rejects.toThrow('throttled');
    await expect(hasher.mac('sk_a')).resolves.toHaveLength(32);
    expect(failing.commandCalls(GenerateMacCommand)).toHaveLength(2);
    failing.restore();
  });
});
