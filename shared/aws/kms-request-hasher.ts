import { createHmac } from 'node:crypto';
import { GenerateMacCommand } from '@aws-sdk/client-kms';
import type { KMSClient } from '@aws-sdk/client-kms';
import type { RequestHasher } from '#shared/domain/idempotency.ts';

/**
 * Idempotency-Key request hashes keyed by a KMS HMAC key of their own, the
 * request-hash key (docs/vault.md, "Idempotency keys"), derived the way
 * fingerprint keys are (kms-fingerprints.ts): one GenerateMac over a fixed,
 * non-secret label per container, cached; the hash is HMAC-SHA-256 under that
 * derived key, computed here. Not the fingerprint key: a function that may
 * call GenerateMac on a key may derive anything from it, and the functions
 * that keep Idempotency-Key records must not derive fingerprint keys.
 *
 * One key for every organization: the stored item's key already names the
 * organization, and the hash only has to tell one request from another. The
 * derived key lives only in this module's memory and is never logged.
 */
const DERIVATION_LABEL = 'payments/idempotency-request/v1';

export class KmsRequestHasher implements RequestHasher {
  private derived: Promise<Buffer> | undefined;

  constructor(
    private readonly kms: KMSClient,
    private readonly keyId: string,
  ) {}

  async hash(parts: ReadonlyArray<string | Uint8Array>): Promise<string> {
    const hmac = createHmac('sha256', await this.key());
    // Each part behind its length: ["ab", "c"] and ["a", "bc"] never hash alike.
    for (const part of parts) {
      const bytes = typeof part === 'string' ? Buffer.from(part, 'utf8') : part;
      hmac.update(`${bytes.length}:`).update(bytes);
    }
    return hmac.digest('base64url');
  }

  private key(): Promise<Buffer> {
    if (this.derived) return this.derived;
    const derived = this.derive();
    this.derived = derived;
    // A failed derivation is not remembered: the next request asks KMS again.
    derived.catch(() => {
      if (this.derived === derived) this.derived = undefined;
    });
    return derived;
  }

  private async derive(): Promise<Buffer> {
    const { Mac } = await this.kms.send(new GenerateMacCommand({ KeyId: this.keyId, MacAlgorithm: 'HMAC_SHA_256', Message: Buffer.from(DERIVATION_LABEL, 'utf8') }));
    if (!Mac) throw new Error('KMS GenerateMac returned no MAC');
    return Buffer.from(Mac);
  }
}
