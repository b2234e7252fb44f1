import {
  CreateAliasCommand,
  CreateKeyCommand,
  DecryptCommand,
  DescribeKeyCommand,
  EncryptCommand,
  GenerateDataKeyCommand,
  GenerateDataKeyWithoutPlaintextCommand,
  GenerateMacCommand,
  KMSClient,
  ReEncryptCommand,
  VerifyMacCommand,
} from '@aws-sdk/client-kms';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKmsStandin, type KmsStandin } from '#local/kms-standin.ts';

const VAULT = 'alias/vault';
const OTHER = 'alias/other';
const MAC = 'alias/credential-mac';

function clientFor(url: string): KMSClient {
  return new KMSClient({
    endpoint: url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
}

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const text = (data: Uint8Array | undefined): string => new TextDecoder().decode(data);

async function errorName(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return (error as Error).name;
  }
  throw new Error('expected the call to fail');
}

describe('KMS stand-in with @aws-sdk/client-kms', () => {
  let standin: KmsStandin;
  let kms: KMSClient;

  beforeAll(async () => {
    standin = await startKmsStandin({
      keys: [
        { alias: VAULT, keySpec: 'SYMMETRIC_DEFAULT' },
        { alias: OTHER, keySpec: 'SYMMETRIC_DEFAULT' },
        { alias: MAC, keySpec: 'HMAC_256' },
      ],
    });
    kms = clientFor(standin.url);
  });

  afterAll(async () => {
    kms?.destroy();
    await standin?.close();
  });

  it('exposes the created keys with ARNs', () => {
    const vault = standin.keys[VAULT];
    expect(vault?.keyId).toMatch(/^[0-9a-f-]{36}$/);
    expect(vault?.arn).toBe(`arn:aws:kms:us-east-1:000000000000:key/${vault?.keyId}`);
    expect(standin.keys[MAC]?.keyId).not.toBe(vault?.keyId);
  });

  it('round-trips by alias, key id, key ARN and alias ARN', async () => {
    const vault = standin.keys[VAULT]!;
    const aliasArn = `arn:aws:kms:us-east-1:000000000000:${VAULT}`;
    for (const keyId of [VAULT, vault.keyId, vault.arn, aliasArn]) {
      const encrypted = await kms.send(new EncryptCommand({ KeyId: keyId, Plaintext: bytes(`secret via ${keyId}`) }));
      expect(encrypted.KeyId).toBe(vault.arn);
      expect(encrypted.EncryptionAlgorithm).toBe('SYMMETRIC_DEFAULT');
      const decrypted = await kms.send(new DecryptCommand({ CiphertextBlob: encrypted.CiphertextBlob, KeyId: keyId }));
      expect(text(decrypted.Plaintext)).toBe(`secret via ${keyId}`);
      expect(decrypted.KeyId).toBe(vault.arn);
    }
  });

  it('finds the key from the ciphertext when Decrypt has no KeyId', async () => {
    const encrypted = await kms.send(new EncryptCommand({ KeyId: OTHER, Plaintext: bytes('no key id') }));
    const decrypted = await kms.send(new DecryptCommand({ CiphertextBlob: encrypted.CiphertextBlob }));
    expect(text(decrypted.Plaintext)).toBe('no key id');
    expect(decrypted.KeyId).toBe(standin.keys[OTHER]?.arn);
  });

  it('binds the encryption context regardless of member order', async () => {
    const encrypted = await kms.send(
      new EncryptCommand({ KeyId: VAULT, Plaintext: bytes('bound'), EncryptionContext: { tenant: 't-1', purpose: 'vault' } }),
    );
    const decrypted = await kms.send(
      new DecryptCommand({ CiphertextBlob: encrypted.CiphertextBlob, EncryptionContext: { purpose: 'vault', tenant: 't-1' } }),
    );
    expect(text(decrypted.Plaintext)).toBe('bound');
  });

  it('refuses a missing, extra or different encryption context', async () => {
    const context = { tenant: 't-1' };
    const { CiphertextBlob } = await kms.send(new EncryptCommand({ KeyId: VAULT, Plaintext: bytes('bound'), EncryptionContext: context }));
    const attempts: Array<Record<string, string> | undefined> = [undefined, {}, { tenant: 't-2' }, { tenant: 't-1', extra: 'x' }, { Tenant: 't-1' }];
    for (const attempt of attempts) {
      expect(await errorName(kms.send(new DecryptCommand({ CiphertextBlob, EncryptionContext: attempt })))).toBe('InvalidCiphertextException');
    }
    const unbound = await kms.send(new EncryptCommand({ KeyId: VAULT, Plaintext: bytes('unbound') }));
    expect(await errorName(kms.send(new DecryptCommand({ CiphertextBlob: unbound.CiphertextBlob, EncryptionContext: context })))).toBe(
      'InvalidCiphertextException',
    );
  });

  it('raises IncorrectKeyException when KeyId is not the ciphertext key', async () => {
    const { CiphertextBlob } = await kms.send(new EncryptCommand({ KeyId: VAULT, Plaintext: bytes('x') }));
    expect(await errorName(kms.send(new DecryptCommand({ CiphertextBlob, KeyId: OTHER })))).toBe('IncorrectKeyException');
    expect(await errorName(kms.send(new DecryptCommand({ CiphertextBlob, KeyId: standin.keys[OTHER]!.arn })))).toBe('IncorrectKeyException');
  });

  it('rejects tampered or malformed ciphertext', async () => {
    const { CiphertextBlob } = await kms.send(new EncryptCommand({ KeyId: VAULT, Plaintext: bytes('integrity') }));
    const blob = Buffer.from(CiphertextBlob!);
    for (const index of [0, 5, 40, 50, blob.length - 1]) {
      const tampered = Buffer.from(blob);
      tampered[index] = tampered[index]! ^ 0x01;
      expect(await errorName(kms.send(new DecryptCommand({ CiphertextBlob: tampered })))).toBe('InvalidCiphertextException');
    }
    expect(await errorName(kms.send(new DecryptCommand({ CiphertextBlob: blob.subarray(0, 40) })))).toBe('InvalidCiphertextException');
    expect(await errorName(kms.send(new DecryptCommand({ CiphertextBlob: bytes('not a kms ciphertext at all') })))).toBe(
      'InvalidCiphertextException',
    );
  });

  it('generates data keys that decrypt back with the same context', async () => {
    const context = { document: 'doc-1' };
    const generated = await kms.send(new GenerateDataKeyCommand({ KeyId: VAULT, KeySpec: 'AES_256', EncryptionContext: context }));
    expect(generated.Plaintext).toHaveLength(32);
    expect(generated.KeyId).toBe(standin.keys[VAULT]?.arn);
    const decrypted = await kms.send(new DecryptCommand({ CiphertextBlob: generated.CiphertextBlob, EncryptionContext: context }));
    expect(Buffer.from(decrypted.Plaintext!).equals(Buffer.from(generated.Plaintext!))).toBe(true);
    expect(await errorName(kms.send(new DecryptCommand({ CiphertextBlob: generated.CiphertextBlob })))).toBe('InvalidCiphertextException');

    const short = await kms.send(new GenerateDataKeyCommand({ KeyId: VAULT, NumberOfBytes: 16 }));
    expect(short.Plaintext).toHaveLength(16);
    expect(await errorName(kms.send(new GenerateDataKeyCommand({ KeyId: VAULT })))).toBe('ValidationException');
  });

  it('generates data keys without plaintext', async () => {
    const context = { document: 'doc-2' };
    const generated = await kms.send(new GenerateDataKeyWithoutPlaintextCommand({ KeyId: VAULT, KeySpec: 'AES_128', EncryptionContext: context }));
    expect(generated).not.toHaveProperty('Plaintext');
    expect(generated.KeyId).toBe(standin.keys[VAULT]?.arn);
    const decrypted = await kms.send(new DecryptCommand({ CiphertextBlob: generated.CiphertextBlob, EncryptionContext: context }));
    expect(decrypted.Plaintext).toHaveLength(16);
  });

  it('re-encrypts under another key and context', async () => {
    const { CiphertextBlob } = await kms.send(new EncryptCommand({ KeyId: VAULT, Plaintext: bytes('move me'), EncryptionContext: { a: '1' } }));
    const moved = await kms.send(
      new ReEncryptCommand({ CiphertextBlob, SourceEncryptionContext: { a: '1' }, DestinationKeyId: OTHER, DestinationEncryptionContext: { b: '2' } }),
    );
    expect(moved.SourceKeyId).toBe(standin.keys[VAULT]?.arn);
    expect(moved.KeyId).toBe(standin.keys[OTHER]?.arn);
    const decrypted = await kms.send(new DecryptCommand({ CiphertextBlob: moved.CiphertextBlob, EncryptionContext: { b: '2' }, KeyId: OTHER }));
    expect(text(decrypted.Plaintext)).toBe('move me');
  });

  it('generates deterministic MACs and verifies them', async () => {
    const message = bytes('api-secure-key');
    const first = await kms.send(new GenerateMacCommand({ KeyId: MAC, Message: message, MacAlgorithm: 'HMAC_SHA_256' }));
    const second = await kms.send(new GenerateMacCommand({ KeyId: standin.keys[MAC]!.keyId, Message: message, MacAlgorithm: 'HMAC_SHA_256' }));
    expect(first.Mac).toHaveLength(32);
    expect(Buffer.from(first.Mac!).equals(Buffer.from(second.Mac!))).toBe(true);
    expect(first.KeyId).toBe(standin.keys[MAC]?.arn);
    expect(first.MacAlgorithm).toBe('HMAC_SHA_256');

    const valid = await kms.send(new VerifyMacCommand({ KeyId: MAC, Message: message, Mac: first.Mac, MacAlgorithm: 'HMAC_SHA_256' }));
    expect(valid.MacValid).toBe(true);

    const wrongMac = Buffer.from(first.Mac!);
    wrongMac[0] = wrongMac[0]! ^ 0xff;
    expect(await errorName(kms.send(new VerifyMacCommand({ KeyId: MAC, Message: message, Mac: wrongMac, MacAlgorithm: 'HMAC_SHA_256' })))).toBe(
      'KMSInvalidMacException',
    );
    expect(
      await errorName(kms.send(new VerifyMacCommand({ KeyId: MAC, Message: bytes('other'), Mac: first.Mac, MacAlgorithm: 'HMAC_SHA_256' }))),
    ).toBe('KMSInvalidMacException');
  });

  it('enforces key usage', async () => {
    expect(await errorName(kms.send(new EncryptCommand({ KeyId: MAC, Plaintext: bytes('x') })))).toBe('InvalidKeyUsageException');
    expect(await errorName(kms.send(new GenerateDataKeyCommand({ KeyId: MAC, KeySpec: 'AES_256' })))).toBe('InvalidKeyUsageException');
    expect(await errorName(kms.send(new GenerateMacCommand({ KeyId: VAULT, Message: bytes('x'), MacAlgorithm: 'HMAC_SHA_256' })))).toBe(
      'InvalidKeyUsageException',
    );
    expect(await errorName(kms.send(new GenerateMacCommand({ KeyId: MAC, Message: bytes('x'), MacAlgorithm: 'HMAC_SHA_512' })))).toBe(
      'InvalidKeyUsageException',
    );
  });

  it('raises NotFoundException for unknown keys and aliases', async () => {
    const unknownIds = [
      'alias/missing',
      '11111111-2222-3333-4444-555555555555',
      'arn:aws:kms:us-east-1:000000000000:key/11111111-2222-3333-4444-555555555555',
      `arn:aws:kms:eu-west-1:000000000000:key/${standin.keys[VAULT]!.keyId}`,
    ];
    for (const keyId of unknownIds) {
      expect(await errorName(kms.send(new EncryptCommand({ KeyId: keyId, Plaintext: bytes('x') })))).toBe('NotFoundException');
    }
    expect(await errorName(kms.send(new DescribeKeyCommand({ KeyId: 'alias/missing' })))).toBe('NotFoundException');
  });

  it('creates keys and aliases through the API', async () => {
    const created = await kms.send(new CreateKeyCommand({ KeySpec: 'HMAC_256', KeyUsage: 'GENERATE_VERIFY_MAC', Description: 'made in a test' }));
    const keyId = created.KeyMetadata!.KeyId!;
    expect(created.KeyMetadata?.KeySpec).toBe('HMAC_256');
    expect(created.KeyMetadata?.CreationDate).toBeInstanceOf(Date);
    await kms.send(new CreateAliasCommand({ AliasName: 'alias/made-in-test', TargetKeyId: keyId }));
    const described = await kms.send(new DescribeKeyCommand({ KeyId: 'alias/made-in-test' }));
    expect(described.KeyMetadata?.KeyId).toBe(keyId);
    expect(described.KeyMetadata?.KeyUsage).toBe('GENERATE_VERIFY_MAC');
    expect(described.KeyMetadata?.MacAlgorithms).toEqual(['HMAC_SHA_256']);

    expect(await errorName(kms.send(new CreateAliasCommand({ AliasName: 'alias/made-in-test', TargetKeyId: keyId })))).toBe('AlreadyExistsException');
    expect(await errorName(kms.send(new CreateKeyCommand({ KeySpec: 'HMAC_256' })))).toBe('ValidationException');
    expect(await errorName(kms.send(new CreateKeyCommand({ KeySpec: 'RSA_2048', KeyUsage: 'SIGN_VERIFY' })))).toBe('UnsupportedOperationException');
  });

  it('answers malformed requests and unknown operations with JSON errors', async () => {
    const post = (target: string, body: string) =>
      fetch(standin.url, { method: 'POST', headers: { 'Content-Type': 'application/x-amz-json-1.1', 'X-Amz-Target': target }, body });

    const malformed = await post('TrentService.Encrypt', '{not json');
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get('content-type')).toBe('application/x-amz-json-1.1');
    expect(malformed.headers.get('x-amzn-requestid')).toBeTruthy();
    expect(await malformed.json()).toMatchObject({ __type: 'SerializationException' });

    const unknown = await post('TrentService.ScheduleKeyDeletion', '{}');
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ __type: 'UnsupportedOperationException' });

    const missingField = await post('TrentService.Encrypt', '{}');
    expect(await missingField.json()).toMatchObject({ __type: 'ValidationException' });

    const oversized = await post('TrentService.Encrypt', 'x'.repeat(1024 * 1024 + 1));
    expect(oversized.status).toBe(413);
    expect(await oversized.json()).toMatchObject({ __type: 'ValidationException' });

    // The server must still be serving after all of the above.
    const described = await kms.send(new DescribeKeyCommand({ KeyId: VAULT }));
    expect(described.KeyMetadata?.Enabled).toBe(true);
  });

  it('counts calls per operation', async () => {
    standin.resetCalls();
    expect(standin.calls).toEqual({});
    const { CiphertextBlob } = await kms.send(new EncryptCommand({ KeyId: VAULT, Plaintext: bytes('count me') }));
    await kms.send(new DecryptCommand({ CiphertextBlob }));
    await kms.send(new DecryptCommand({ CiphertextBlob }));
    await errorName(kms.send(new DecryptCommand({ CiphertextBlob, KeyId: OTHER })));
    expect(standin.calls).toEqual({ Encrypt: 1, Decrypt: 3 });
    standin.resetCalls();
    expect(standin.calls).toEqual({});
  });
});

describe('KMS stand-in persistence', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'kms-standin-'));
  });

  afterAll(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('reloads key material so earlier ciphertexts still decrypt', async () => {
    const keys = [
      { alias: VAULT, keySpec: 'SYMMETRIC_DEFAULT' as const },
      { alias: MAC, keySpec: 'HMAC_256' as const },
    ];
    const first = await startKmsStandin({ dataDir, keys });
    const firstClient = clientFor(first.url);
    let ciphertext: Uint8Array | undefined;
    let mac: Uint8Array | undefined;
    try {
      ({ CiphertextBlob: ciphertext } = await firstClient.send(
        new EncryptCommand({ KeyId: VAULT, Plaintext: bytes('durable'), EncryptionContext: { scope: 'restart' } }),
      ));
      ({ Mac: mac } = await firstClient.send(new GenerateMacCommand({ KeyId: MAC, Message: bytes('m'), MacAlgorithm: 'HMAC_SHA_256' })));
    } finally {
      firstClient.destroy();
      await first.close();
    }
    const persisted = JSON.parse(await readFile(join(dataDir, 'kms-keys.json'), 'utf8')) as { aliases: Record<string, string> };
    expect(persisted.aliases[VAULT]).toBe(first.keys[VAULT]?.keyId);

    const second = await startKmsStandin({ dataDir, keys });
    const secondClient = clientFor(second.url);
    try {
      expect(second.keys).toEqual(first.keys);
      const decrypted = await secondClient.send(new DecryptCommand({ CiphertextBlob: ciphertext, EncryptionContext: { scope: 'restart' } }));
      expect(text(decrypted.Plaintext)).toBe('durable');
      const verified = await secondClient.send(new VerifyMacCommand({ KeyId: MAC, Message: bytes('m'), Mac: mac, MacAlgorithm: 'HMAC_SHA_256' }));
      expect(verified.MacValid).toBe(true);
    } finally {
      secondClient.destroy();
      await second.close();
    }
  });

  it('keeps memory-only instances independent', async () => {
    const keys = [{ alias: VAULT, keySpec: 'SYMMETRIC_DEFAULT' as const }];
    const first = await startKmsStandin({ keys });
    const second = await startKmsStandin({ keys });
    const firstClient = clientFor(first.url);
    const secondClient = clientFor(second.url);
    try {
      expect(second.keys[VAULT]?.keyId).not.toBe(first.keys[VAULT]?.keyId);
      const { CiphertextBlob } = await firstClient.send(new EncryptCommand({ KeyId: VAULT, Plaintext: bytes('x') }));
      expect(await errorName(secondClient.send(new DecryptCommand({ CiphertextBlob })))).toBe('InvalidCiphertextException');
    } finally {
      firstClient.destroy();
      secondClient.destroy();
      await first.close();
      await second.close();
    }
  });
});
