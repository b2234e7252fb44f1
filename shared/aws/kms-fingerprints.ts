import { createHmac } from 'node:crypto';
import { GenerateMacCommand } from '@aws-sdk/client-kms';
import type { KMSClient } from '@aws-sdk/client-kms';
import type { AccountIdentity, Fingerprinter } from '#shared/domain/paymethods/fingerprints.ts';

/**
 * Fingerprints keyed by a KMS HMAC key (docs/vault.md, "Fingerprints").
 *
 * The organization's fingerprint key is KMS GenerateMac (HMAC-SHA-256, the
 * dedicated fingerprint key) over a fixed, non-secret message naming the
 * organization; the fingerprint is HMAC-SHA-256 of the account under that
 * derived key, computed here. One KMS call per organization per container,
 * none per request once warm; binding the derived key to the organization
 * makes fingerprints of the same number unrelated across organizations, and
 * nobody without kms:GenerateMac on the key can compute one.
 *
 * Derived keys live only in this module's memory (bounded) and are never logged.
 */
const DERIVATION_LABEL = 'payments/paymethod-fingerprint/v1/organization/';
export const MAX_CACHED_FINGERPRINT_KEYS = 1_000;

export class KmsFingerprinter implements Fingerprinter {
  private readonly organizationKeys = new Map<string, Promise<Buffer>>();

  constructor(
    private readonly kms: KMSClient,
    private readonly keyId: string,
  ) {}

  async fingerprint(organizationId: string, account: AccountIdentity): Promise<string> {
    const key = await this.organizationKey(organizationId);
    // A separator that no digit string contains keeps "routing|account" unambiguous.
    const message = account.kind === 'card' ? `card|${account.accountNumber}` : `echeck|${account.routingNumber}|${account.accountNumber}`;
    return `fp_${createHmac('sha256', key).update(message, 'utf8').digest('base64url')}`;
  }

  private organizationKey(organizationId: string): Promise<Buffer> {
    const cached = this.organizationKeys.get(organizationId);
    if (cached) return cached;
    if (this.organizationKeys.size >= MAX_CACHED_FINGERPRINT_KEYS) this.organizationKeys.clear();
    const derived = this.derive(organizationId);
    this.organizationKeys.set(organizationId, derived);
    // A failed derivation is not remembered: the next request asks KMS again.
    derived.catch(() => this.organizationKeys.delete(organizationId));
    return derived;
  }

  private async derive(organizationId: string): Promise<Buffer> {
    const { Mac } = await this.kms.send(
      new GenerateMacCommand({ KeyId: this.keyId, MacAlgorithm: 'HMAC_SHA_256', Message: Buffer.from(`${DERIVATION_LABEL}${organizationId}`, 'utf8') }),
    );
    if (!Mac) throw new Error('KMS GenerateMac returned no MAC');
    return Buffer.from(Mac);
  }
}
