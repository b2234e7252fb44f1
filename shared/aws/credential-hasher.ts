import { createHmac } from 'node:crypto';
import { GenerateMacCommand } from '@aws-sdk/client-kms';
import type { KMSClient } from '@aws-sdk/client-kms';
import type { SecretHasher } from '#shared/domain/credentials.ts';

/**
 * Secure-key hashes keyed by the credential KMS HMAC key (docs/operations.md,
 * "Credentials").
 *
 * The hashing key is KMS GenerateMac (HMAC-SHA-256, the credential key) over a
 * fixed, versioned, non-secret label; the hash of a secure key is
 * HMAC-SHA-256 under that derived key, computed here. One KMS call per
 * process (the first hash), none per attempt: a guess costs no KMS call, so
 * the failed-authentication throttle never has to refuse a valid key to save
 * one. Nobody without kms:GenerateMac on the key can compute a hash, so a copy
 * of the table alone cannot test guesses. The derived key lives only in this
 * object's memory and is never logged; a failed derivation is not kept, so
 * the next attempt asks KMS again.
 *
 * Version 2 is this scheme. Version 1 (no `secret_mac_version` stored) was
 * GenerateMac over the secure key itself, one KMS call per attempt; such
 * credentials no longer verify and are re-issued.
 */
export const SECRET_MAC_VERSION = 2;
const DERIVATION_LABEL = 'payments/credential-secret-mac/v2';

export class KmsSecretHasher implements SecretHasher {
  readonly version = SECRET_MAC_VERSION;
  private derivedKey: Promise<Buffer> | undefined;

  constructor(
    private readonly kms: KMSClient,
    private readonly keyId: string,
  ) {}

  async mac(secret: string): Promise<Uint8Array> {
    return createHmac('sha256', await this.key()).update(secret, 'utf8').digest();
  }

  private key(): Promise<Buffer> {
    if (!this.derivedKey) {
      const derived = this.derive();
      this.derivedKey = derived;
      derived.catch(() => {
        if (this.derivedKey === derived) this.derivedKey = undefined;
      });
    }
    return this.derivedKey;
  }

  private async derive(): Promise<Buffer> {
    const { Mac } = await this.kms.send(new GenerateMacCommand({ KeyId: this.keyId, MacAlgorithm: 'HMAC_SHA_256', Message: Buffer.from(DERIVATION_LABEL, 'utf8') }));
    if (!Mac) throw new Error('KMS GenerateMac returned no MAC');
    return Buffer.from(Mac);
  }
}
