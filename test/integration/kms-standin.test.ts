import { DecryptCommand, GenerateDataKeyCommand, GenerateMacCommand, KMSClient } from '@aws-sdk/client-kms';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKmsStandin, type KmsStandin } from '#local/kms-standin.ts';
import { generateSigningCredentials } from '#local/signing-credentials.ts';
import { signatureVerifier } from '#local/sigv4.ts';
import { signedFetch } from '../support/signed-fetch.ts';

/** The stand-in checks every signature: these tests sign as the operator. */
const signing = generateSigningCredentials([]);
const verifier = signatureVerifier(signing);
/** No function is granted a key: the operator's calls are the only ones allowed. */
const gate = { port: 0, verifier, resources: {}, functions: new Map(), log: () => undefined };

const VAULT = 'alias/vault';
const OTHER = 'alias/other';
const MAC = 'alias/credential-mac';

function clientFor(url: string, credentials = signing.operator): KMSClient {
  return new KMSClient({
    endpoint: url,
    region: 'us-east-1',
    credentials,
    maxAttempts: 1,
  });
}

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

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
      ...gate,
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

  /** A data key sealed under `keyId`: what the vault does with GenerateDataKey. */
  async function sealed(keyId: string, context?: Record<string, string>, client = kms) {
    const generated = await client.send(new GenerateDataKeyCommand({ KeyId: keyId, KeySpec: 'AES_256', EncryptionContext: context }));
    return { CiphertextBlob: generated.CiphertextBlob!, plaintext: Buffer.from(generated.Plaintext!), KeyId: generated.KeyId };
  }

  it('round-trips by alias, key id, key ARN and alias ARN', async () => {
    const vault = standin.keys[VAULT]!;
    const aliasArn = `arn:aws:kms:us-east-1:000000000000:${VAULT}`;
    for (const keyId of [VAULT, vault.keyId, vault.arn, aliasArn]) {
      const generated = await sealed(keyId);
      expect(generated.KeyId).toBe(vault.arn);
      const decrypted = await kms.send(new DecryptCommand({ CiphertextBlob: generated.CiphertextBlob, KeyId: keyId }));
      expect(Buffer.from(decrypted.Plaintext!).equals(generated.plaintext)).toBe(true);
      expect(decrypted.KeyId).toBe(vault.arn);
      expect(decrypted.EncryptionAlgorithm).toBe('SYMMETRIC_DEFAULT');
    }
  });

  it('finds the key from the ciphertext when Decrypt has no KeyId', async () => {
    const generated = await sealed(OTHER);
    const decrypted = await kms.send(new DecryptCommand({ CiphertextBlob: generated.CiphertextBlob }));
    expect(Buffer.from(decrypted.Plaintext!).equals(generated.plaintext)).toBe(true);
    expect(decrypted.KeyId).toBe(standin.keys[OTHER]?.arn);
  });

  it('binds the encryption context regardless of member order', async () => {
    const generated = await sealed(VAULT, { tenant: 't-1', purpose: 'vault' });
    const decrypted = await kms.send(new DecryptCommand({ CiphertextBlob: generated.CiphertextBlob, EncryptionContext: { purpose: 'vault', tenant: 't-1' } }));
    expect(Buffer.from(decrypted.Plaintext!).equals(generated.plaintext)).toBe(true);
  });

  it('refuses a missing, extra or different encryption context', async () => {
    const context = { tenant: 't-1' };
    const { CiphertextBlob } = await sealed(VAULT, context);
    const attempts: Array<Record<string, string> | undefined> = [undefined, {}, { tenant: 't-2' }, { tenant: 't-1', extra: 'x' }, { Tenant: 't-1' }];
    for (const attempt of attempts) {
      expect(await errorName(kms.send(new DecryptCommand({ CiphertextBlob, EncryptionContext: attempt })))).toBe('InvalidCiphertextException');
    }
    const unbound = await sealed(VAULT);
    expect(await errorName(kms.send(new DecryptCommand({ CiphertextBlob: unbound.CiphertextBlob, EncryptionContext: context })))).toBe(
      'InvalidCiphertextException',
    );
  });

  it('raises IncorrectKeyException when KeyId is not the ciphertext key', async () => {
    const { CiphertextBlob } = await sealed(VAULT);
    expect(await errorName(kms.send(new DecryptCommand({ CiphertextBlob, KeyId: OTHER })))).toBe('IncorrectKeyException');
    expect(await errorName(kms.send(new DecryptCommand({ CiphertextBlob, KeyId: standin.keys[OTHER]!.arn })))).toBe('IncorrectKeyException');
  });

  it('rejects tampered or malformed ciphertext', async () => {
    const { CiphertextBlob } = await sealed(VAULT);
    const blob = Buffer.from(CiphertextBlob);
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

  it('generates data keys of the asked size that decrypt back with the same context', async () => {
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

  it('generates deterministic MACs', async () => {
    const message = bytes('api-secure-key');
    const first = await kms.send(new GenerateMacCommand({ KeyId: MAC, Message: message, MacAlgorithm: 'HMAC_SHA_256' }));
    const second = await kms.send(new GenerateMacCommand({ KeyId: standin.keys[MAC]!.keyId, Message: message, MacAlgorithm: 'HMAC_SHA_256' }));
    expect(first.Mac).toHaveLength(32);
    expect(Buffer.from(first.Mac!).equals(Buffer.from(second.Mac!))).toBe(true);
    expect(first.KeyId).toBe(standin.keys[MAC]?.arn);
    expect(first.MacAlgorithm).toBe('HMAC_SHA_256');
    const other = await kms.send(new GenerateMacCommand({ KeyId: MAC, Message: bytes('other'), MacAlgorithm: 'HMAC_SHA_256' }));
    expect(Buffer.from(other.Mac!).equals(Buffer.from(first.Mac!))).toBe(false);
  });

  it('enforces key usage', async () => {
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
      expect(await errorName(kms.send(new GenerateDataKeyCommand({ KeyId: keyId, KeySpec: 'AES_256' })))).toBe('NotFoundException');
    }
    expect(await errorName(kms.send(new GenerateMacCommand({ KeyId: 'alias/missing', Message: bytes('x'), MacAlgorithm: 'HMAC_SHA_256' })))).toBe('NotFoundException');
  });

  it('refuses an unsigned call, a signature by a key it never issued, a wrong signature and a stale one, as KMS does', async () => {
    const target = { 'Content-Type': 'application/x-amz-json-1.1', 'X-Amz-Target': 'TrentService.GenerateMac' };
    const body = JSON.stringify({ KeyId: MAC, Message: Buffer.from('4111111111111111').toString('base64'), MacAlgorithm: 'HMAC_SHA_256' });
    const answers = {
      unsigned: await fetch(standin.url, { method: 'POST', headers: target, body }),
      stranger: await signedFetch(standin.url, { headers: target, body }, generateSigningCredentials([]).operator, 'kms'),
      wrongSecret: await signedFetch(standin.url, { headers: target, body }, { ...signing.operator, secretAccessKey: 'not-the-secret' }, 'kms'),
    };
    const stale = await signedFetch(standin.url, { headers: target, body, signingDate: new Date(Date.now() - 16 * 60 * 1000) }, signing.operator, 'kms');
    const refusals = await Promise.all(
      [...Object.values(answers), stale].map(async (answer) => ({ status: answer.status, type: ((await answer.json()) as { __type: string }).__type })),
    );
    expect(refusals).toEqual([
      { status: 400, type: 'MissingAuthenticationTokenException' },
      { status: 400, type: 'UnrecognizedClientException' },
      { status: 400, type: 'InvalidSignatureException' },
      { status: 400, type: 'InvalidSignatureException' },
    ]);
    expect(await errorName(clientFor(standin.url, { accessKeyId: signing.operator.accessKeyId, secretAccessKey: 'guess' }).send(new GenerateMacCommand({ KeyId: MAC, Message: bytes('x'), MacAlgorithm: 'HMAC_SHA_256' })))).toBe(
      'InvalidSignatureException',
    );
  });

  it('answers malformed requests and operations the service never calls with JSON errors', async () => {
    const post = (target: string, body: string) =>
      signedFetch(standin.url, { headers: { 'Content-Type': 'application/x-amz-json-1.1', 'X-Amz-Target': target }, body }, signing.operator, 'kms');

    const malformed = await post('TrentService.GenerateDataKey', '{not json');
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get('content-type')).toBe('application/x-amz-json-1.1');
    expect(malformed.headers.get('x-amzn-requestid')).toBeTruthy();
    expect(await malformed.json()).toMatchObject({ __type: 'SerializationException' });

    for (const operation of ['ScheduleKeyDeletion', 'Encrypt', 'CreateKey']) {
      const unknown = await post(`TrentService.${operation}`, '{}');
      expect(unknown.status).toBe(400);
      expect(await unknown.json()).toMatchObject({ __type: 'UnsupportedOperationException' });
    }

    const missingField = await post('TrentService.GenerateDataKey', '{}');
    expect(await missingField.json()).toMatchObject({ __type: 'ValidationException' });

    const oversized = await post('TrentService.GenerateDataKey', 'x'.repeat(1024 * 1024 + 1));
    expect(oversized.status).toBe(413);
    expect(await oversized.json()).toMatchObject({ __type: 'ValidationException' });

    // The server must still be serving after all of the above.
    expect((await sealed(VAULT)).plaintext).toHaveLength(32);
  });

  it('counts calls per operation', async () => {
    standin.resetCalls();
    expect(standin.calls).toEqual({});
    const { CiphertextBlob } = await sealed(VAULT);
    await kms.send(new DecryptCommand({ CiphertextBlob }));
    await kms.send(new DecryptCommand({ CiphertextBlob }));
    await errorName(kms.send(new DecryptCommand({ CiphertextBlob, KeyId: OTHER })));
    expect(standin.calls).toEqual({ GenerateDataKey: 1, Decrypt: 3 });
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
    const first = await startKmsStandin({ dataDir, keys, ...gate });
    const firstClient = clientFor(first.url);
    let ciphertext: Uint8Array | undefined;
    let dataKey: Buffer | undefined;
    let mac: Uint8Array | undefined;
    try {
      let generated;
      ({ CiphertextBlob: ciphertext, Plaintext: generated } = await firstClient.send(
        new GenerateDataKeyCommand({ KeyId: VAULT, KeySpec: 'AES_256', EncryptionContext: { scope: 'restart' } }),
      ));
      dataKey = Buffer.from(generated!);
      ({ Mac: mac } = await firstClient.send(new GenerateMacCommand({ KeyId: MAC, Message: bytes('m'), MacAlgorithm: 'HMAC_SHA_256' })));
    } finally {
      firstClient.destroy();
      await first.close();
    }
    const persisted = JSON.parse(await readFile(join(dataDir, 'kms-keys.json'), 'utf8')) as { aliases: Record<string, string> };
    expect(persisted.aliases[VAULT]).toBe(first.keys[VAULT]?.keyId);

    const second = await startKmsStandin({ dataDir, keys, ...gate });
    const secondClient = clientFor(second.url);
    try {
      expect(second.keys).toEqual(first.keys);
      const decrypted = await secondClient.send(new DecryptCommand({ CiphertextBlob: ciphertext, EncryptionContext: { scope: 'restart' } }));
      expect(Buffer.from(decrypted.Plaintext!).equals(dataKey!)).toBe(true);
      const again = await secondClient.send(new GenerateMacCommand({ KeyId: MAC, Message: bytes('m'), MacAlgorithm: 'HMAC_SHA_256' }));
      expect(Buffer.from(again.Mac!).equals(Buffer.from(mac!))).toBe(true);
    } finally {
      secondClient.destroy();
      await second.close();
    }
  });

  it('keeps memory-only instances independent', async () => {
    const keys = [{ alias: VAULT, keySpec: 'SYMMETRIC_DEFAULT' as const }];
    const first = await startKmsStandin({ keys, ...gate });
    const second = await startKmsStandin({ keys, ...gate });
    const firstClient = clientFor(first.url);
    const secondClient = clientFor(second.url);
    try {
      expect(second.keys[VAULT]?.keyId).not.toBe(first.keys[VAULT]?.keyId);
      const { CiphertextBlob } = await firstClient.send(new GenerateDataKeyCommand({ KeyId: VAULT, KeySpec: 'AES_256' }));
      expect(await errorName(secondClient.send(new DecryptCommand({ CiphertextBlob })))).toBe('InvalidCiphertextException');
    } finally {
      firstClient.destroy();
      secondClient.destroy();
      await first.close();
      await second.close();
    }
  });
});
