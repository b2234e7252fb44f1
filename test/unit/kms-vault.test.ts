import { randomBytes } from 'node:crypto';
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { KmsVault } from '#shared/aws/kms-vault.ts';
import { UnreadableSecret } from '#shared/domain/vault.ts';

const KEY_ARN = 'arn:aws:kms:us-east-1:000000000000:key/vault';
const dataKey = randomBytes(32);
const wrapped = randomBytes(64);

describe('KMS envelope vault', () => {
  const kms = mockClient(KMSClient);
  afterEach(() => kms.reset());

  function stubKms(): void {
    kms.on(GenerateDataKeyCommand).resolves({ Plaintext: new Uint8Array(dataKey), CiphertextBlob: new Uint8Array(wrapped), KeyId: KEY_ARN });
    kms.on(DecryptCommand).resolves({ Plaintext: new Uint8Array(dataKey), KeyId: KEY_ARN });
  }

  it('seals many values with one cached data key per organization, bound by its encryption context', async () => {
    stubKms();
    const vault = new KmsVault(new KMSClient({ region: 'us-east-1' }), KEY_ARN);
    const sealed = await vault.seal('4111111111111111', { organizationId: 'org_1', recordToken: 'mth_a' });
    await vault.seal('5555555555554444', { organizationId: 'org_1', recordToken: 'mth_b' });
    await vault.seal('5555555555554444', { organizationId: 'org_2', recordToken: 'mth_c' });
    const calls = kms.commandCalls(GenerateDataKeyCommand);
    expect(calls).toHaveLength(2);
    expect(calls[0]?.args[0].input.EncryptionContext).toEqual({ purpose: 'paymethod-vault', organization_id: 'org_1' });
    expect(Buffer.from(sealed.ciphertext).toString('utf8')).not.toContain('4111');
    expect(await vault.open(sealed, { organizationId: 'org_1', recordToken: 'mth_a' })).toBe('4111111111111111');
    expect(kms.commandCalls(DecryptCommand)).toHaveLength(0); // the key it made opens without KMS
  });

  it('refuses to open a value under another record or organization (AES-GCM AAD)', async () => {
    stubKms();
    const vault = new KmsVault(new KMSClient({ region: 'us-east-1' }), KEY_ARN);
    const sealed = await vault.seal('4111111111111111', { organizationId: 'org_1', recordToken: 'mth_a' });
    await expect(vault.open(sealed, { organizationId: 'org_1', recordToken: 'mth_other' })).rejects.toThrow(UnreadableSecret);
    await expect(vault.open(sealed, { organizationId: 'org_2', recordToken: 'mth_a' })).rejects.toThrow(UnreadableSecret);
    const tampered = { ...sealed, ciphertext: Buffer.from(sealed.ciphertext).map((byte, index) => (index === 0 ? byte ^ 1 : byte)) };
    await expect(vault.open(tampered, { organizationId: 'org_1', recordToken: 'mth_a' })).rejects.toThrow(UnreadableSecret);
  });

  it('tells a wrapped key KMS refuses as invalid (never to open) from a KMS that is throttled or down (try again)', async () => {
    stubKms();
    const sealed = await new KmsVault(new KMSClient({ region: 'us-east-1' }), KEY_ARN).seal('4111111111111111', { organizationId: 'org_1', recordToken: 'mth_a' });
    const refuse = (name: string) => Object.assign(new Error(name), { name });
    kms.on(DecryptCommand).rejectsOnce(refuse('InvalidCiphertextException')).rejectsOnce(refuse('ThrottlingException'));
    // Fresh vaults: nothing cached, every open asks KMS.
    const open = () => new KmsVault(new KMSClient({ region: 'us-east-1', maxAttempts: 1 }), KEY_ARN).open(sealed, { organizationId: 'org_1', recordToken: 'mth_a' });
    await expect(open()).rejects.toThrow(UnreadableSecret);
    const throttled = await open().catch((error: unknown) => error);
    expect(throttled).not.toBeInstanceOf(UnreadableSecret);
    expect((throttled as Error).name).toBe('ThrottlingException');
  });

  it('unwraps a stored data key once per container, then renews the sealing key after its use budget', async () => {
    stubKms();
    const writer = new KmsVault(new KMSClient({ region: 'us-east-1' }), KEY_ARN, { maxKeyUses: 2 });
    const sealed = await writer.seal('4111111111111111', { organizationId: 'org_1', recordToken: 'mth_a' });
    await writer.seal('4111111111111111', { organizationId: 'org_1', recordToken: 'mth_b' });
    await writer.seal('4111111111111111', { organizationId: 'org_1', recordToken: 'mth_c' });
    expect(kms.commandCalls(GenerateDataKeyCommand)).toHaveLength(2);
    const reader = new KmsVault(new KMSClient({ region: 'us-east-1' }), KEY_ARN);
    await reader.open(sealed, { organizationId: 'org_1', recordToken: 'mth_a' });
    await reader.open(sealed, { organizationId: 'org_1', recordToken: 'mth_a' });
    const decrypts = kms.commandCalls(DecryptCommand);
    expect(decrypts).toHaveLength(1);
    expect(decrypts[0]?.args[0].input.EncryptionContext).toEqual({ purpose: 'paymethod-vault', organization_id: 'org_1' });
  });
});
