import { GenerateMacCommand } from '@aws-sdk/client-kms';
import type { KMSClient } from '@aws-sdk/client-kms';
import type { SecretHasher } from '#shared/domain/credentials.ts';

/** HMAC-SHA-256 computed by KMS: a stolen table alone cannot be used to test guesses offline. */
export class KmsSecretHasher implements SecretHasher {
  constructor(
    private readonly client: KMSClient,
    private readonly keyId: string,
  ) {}

  async mac(secret: string): Promise<Uint8Array> {
    const { Mac } = await this.client.send(
      new GenerateMacCommand({ KeyId: this.keyId, MacAlgorithm: 'HMAC_SHA_256', Message: Buffer.from(secret, 'utf8') }),
    );
    if (!Mac) throw new Error('KMS GenerateMac returned no MAC');
    return Mac;
  }
}
