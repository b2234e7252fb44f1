import { createHash, createHmac, randomBytes } from 'node:crypto';
import { GenerateMacCommand, KMSClient } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, describe, expect, it } from 'vitest';
import { KmsFingerprinter } from '#shared/aws/kms-fingerprints.ts';
import { KmsRequestHasher } from '#shared/aws/kms-request-hasher.ts';

describe('KMS request hasher (Idempotency-Key)', () => {
  const keyMaterial = randomBytes(32);
  const kms = mockClient(KMSClient);
  kms.on(GenerateMacCommand).callsFake((input: { Message: Uint8Array }) => ({ Mac: createHmac('sha256', keyMaterial).update(input.Message).digest() }));
  afterAll(() => kms.restore());
  const client = new KMSClient({ region: 'us-east-1' });

  it('asks KMS once per container over a fixed label, then hashes locally; equal parts hash equal, others not', async () => {
    kms.resetHistory();
    const hasher = new KmsRequestHasher(client, 'key');
    const hashes = await Promise.all([1, 2, 3].map(() => hasher.hash(['route', '{"card":{}}'])));
    expect(new Set(hashes).size).toBe(1);
    expect(await hasher.hash(['route', '{"card":{"x":1}}'])).not.toBe(hashes[0]);
    // Parts count on their own: the same text split elsewhere is another request.
    expect(await hasher.hash(['ro', 'ute{"card":{}}'])).not.toBe(hashes[0]);
    const messages = kms.commandCalls(GenerateMacCommand).map((call) => Buffer.from(call.args[0].input.Message as Uint8Array).toString('utf8'));
    expect(messages).toEqual(['payments/idempotency-request/v1']);
  });

  it('is neither a plain hash nor anything a fingerprint key gives', async () => {
    const hasher = new KmsRequestHasher(client, 'key');
    const body = '{"card":{"account_number":"4111111111111111"}}';
    const hash = await hasher.hash([body]);
    expect(hash).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(hash).not.toBe(createHash('sha256').update(body).digest('base64url'));
    expect(hash).not.toBe(createHash('sha256').update(`${body.length}:${body}`).digest('base64url'));
    const fingerprint = await new KmsFingerprinter(client, 'key').fingerprint('org_1', { kind: 'card', accountNumber: '4111111111111111' });
    expect(fingerprint).not.toContain(await hasher.hash(['card|4111111111111111']));
  });

  it('asks KMS again after a failed derivation instead of caching the failure', async () => {
    const failing = mockClient(KMSClient);
    failing.on(GenerateMacCommand).rejectsOnce(new Error('throttled')).resolves({ Mac: randomBytes(32) });
    const hasher = new KmsRequestHasher(new KMSClient({ region: 'us-east-1' }), 'key');
    await expect(hasher.hash(['a'])).rejects.toThrow('throttled');
    await expect(hasher.hash(['a'])).resolves.toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(failing.commandCalls(GenerateMacCommand)).toHaveLength(2);
    failing.restore();
  });
});
