import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DecryptCommand, GenerateDataKeyCommand } from '@aws-sdk/client-kms';
import type { KMSClient } from '@aws-sdk/client-kms';
import type { SealedSecret, Vault, VaultBinding } from '#shared/domain/vault.ts';
import { UnreadableSecret } from '#shared/domain/vault.ts';
import { VAULT_ENCRYPTION_PURPOSE } from '#shared/platform/names.ts';

/**
 * Envelope encryption with KMS (the scheme is described in docs/vault.md).
 *
 * - A 256-bit data key comes from KMS GenerateDataKey with the encryption
 *   context {purpose, organization_id}: every data key belongs to one tenant,
 *   and each KMS Decrypt of it names that tenant in CloudTrail.
 * - The data key is cached per organization for a bounded time and number of
 *   uses, so a warm container seals without calling KMS. Because a cached key
 *   serves many records, KMS cannot bind each record; AES-256-GCM does: the
 *   additional authenticated data is {organization_id, record token}, so a
 *   ciphertext copied onto another record or tenant fails to open.
 * - The wrapped data key is stored with each record; opening unwraps it with
 *   KMS Decrypt (same context) and caches the plaintext key, bounded likewise.
 *
 * Plaintext keys live only in this module's memory and are never logged.
 */

export interface KmsVaultOptions {
  /** How long a data key may seal new values, and how many. */
  maxKeyAgeMs?: number;
  maxKeyUses?: number;
  /** Bound on cached keys (organizations x unwrapped keys) per container. */
  maxCachedKeys?: number;
  clock?: () => number;
}

interface CachedKey {
  plaintext: Buffer;
  encrypted: Uint8Array;
  keyId: string;
  createdAt: number;
  uses: number;
}

const PURPOSE = VAULT_ENCRYPTION_PURPOSE;
/** How long a container seals with one data key, and how many seals it makes with it, before asking KMS for a fresh one. */
export const DATA_KEY_REUSE_MS = 5 * 60_000;
// Random 96-bit IVs stay far below GCM's 2^32-messages-per-key bound.
export const DATA_KEY_MAX_SEALS = 10_000;
/** Data keys a container holds at once (one per organization), so memory stays bounded. */
export const MAX_CACHED_DATA_KEYS = 256;
/** GCM's standard nonce length. */
export const IV_BYTES = 12;
export const SCHEME_VERSION = 1;

export class KmsVault implements Vault {
  private readonly sealingKeys = new Map<string, CachedKey>();
  private readonly openingKeys = new Map<string, { plaintext: Buffer; createdAt: number }>();
  private readonly maxKeyAgeMs: number;
  private readonly maxKeyUses: number;
  private readonly maxCachedKeys: number;
  private readonly clock: () => number;

  constructor(
    private readonly kms: KMSClient,
    private readonly keyId: string,
    options: KmsVaultOptions = {},
  ) {
    this.maxKeyAgeMs = options.maxKeyAgeMs ?? DATA_KEY_REUSE_MS;
    this.maxKeyUses = options.maxKeyUses ?? DATA_KEY_MAX_SEALS;
    this.maxCachedKeys = options.maxCachedKeys ?? MAX_CACHED_DATA_KEYS;
    this.clock = options.clock ?? Date.now;
  }

  async seal(plaintext: string, binding: VaultBinding): Promise<SealedSecret> {
    const key = await this.sealingKeyFor(binding.organizationId);
    key.uses += 1;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key.plaintext, iv);
    cipher.setAAD(additionalData(binding));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { v: SCHEME_VERSION, key_id: key.keyId, encrypted_data_key: key.encrypted, iv, ciphertext, tag: cipher.getAuthTag() };
  }

  async open(sealed: SealedSecret, binding: VaultBinding): Promise<string> {
    if (sealed.v !== SCHEME_VERSION) throw new UnreadableSecret(`unknown scheme version ${String(sealed.v)}`);
    const dataKey = await this.openingKeyFor(sealed, binding.organizationId);
    try {
      const decipher = createDecipheriv('aes-256-gcm', dataKey, Buffer.from(sealed.iv));
      decipher.setAAD(additionalData(binding));
      decipher.setAuthTag(Buffer.from(sealed.tag));
      // A wrong binding or tampered bytes make final() throw: the value never opens elsewhere.
      return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext)), decipher.final()]).toString('utf8');
    } catch {
      throw new UnreadableSecret('it does not authenticate (changed, or bound to another record)');
    }
  }

  private async sealingKeyFor(organizationId: string): Promise<CachedKey> {
    const now = this.clock();
    const cached = this.sealingKeys.get(organizationId);
    if (cached && now - cached.createdAt < this.maxKeyAgeMs && cached.uses < this.maxKeyUses) return cached;
    const generated = await this.kms.send(
      new GenerateDataKeyCommand({ KeyId: this.keyId, KeySpec: 'AES_256', EncryptionContext: encryptionContext(organizationId) }),
    );
    if (!generated.Plaintext || !generated.CiphertextBlob || !generated.KeyId) throw new Error('KMS GenerateDataKey returned no key');
    const key: CachedKey = { plaintext: Buffer.from(generated.Plaintext), encrypted: generated.CiphertextBlob, keyId: generated.KeyId, createdAt: now, uses: 0 };
    remember(this.sealingKeys, organizationId, key, this.maxCachedKeys);
    // The key just made also opens what it seals, without a Decrypt round trip.
    remember(this.openingKeys, openingCacheKey(organizationId, key.encrypted), { plaintext: key.plaintext, createdAt: now }, this.maxCachedKeys);
    return key;
  }

  private async openingKeyFor(sealed: SealedSecret, organizationId: string): Promise<Buffer> {
    const now = this.clock();
    const cacheKey = openingCacheKey(organizationId, sealed.encrypted_data_key);
    const cached = this.openingKeys.get(cacheKey);
    if (cached && now - cached.createdAt < this.maxKeyAgeMs) return cached.plaintext;
    const decrypted = await this.kms
      .send(new DecryptCommand({ CiphertextBlob: sealed.encrypted_data_key, KeyId: sealed.key_id, EncryptionContext: encryptionContext(organizationId) }))
      .catch((error: unknown) => {
        // KMS's answers about the wrapped key itself; throttling, access and availability pass as they are.
        if (error instanceof Error && PERMANENT_DECRYPT_ERRORS.has(error.name)) throw new UnreadableSecret(`KMS refused its data key (${error.name})`);
        throw error;
      });
    if (!decrypted.Plaintext) throw new Error('KMS Decrypt returned no key');
    const plaintext = Buffer.from(decrypted.Plaintext);
    remember(this.openingKeys, cacheKey, { plaintext, createdAt: now }, this.maxCachedKeys);
    return plaintext;
  }
}

/** Decrypt errors that describe the ciphertext, not the moment: no retry changes them. */
const PERMANENT_DECRYPT_ERRORS = new Set(['InvalidCiphertextException', 'IncorrectKeyException']);

/** Non-secret ids only: the context is visible in CloudTrail. */
function encryptionContext(organizationId: string): Record<string, string> {
  return { purpose: PURPOSE, organization_id: organizationId };
}

/** Canonical (fixed member order) so sealing and opening compute the same bytes. */
function additionalData(binding: VaultBinding): Buffer {
  return Buffer.from(JSON.stringify({ v: SCHEME_VERSION, purpose: PURPOSE, organization_id: binding.organizationId, record: binding.recordToken }), 'utf8');
}

function openingCacheKey(organizationId: string, encryptedDataKey: Uint8Array): string {
  return `${organizationId}:${Buffer.from(encryptedDataKey).toString('base64')}`;
}

/** Insertion-ordered Map as a small LRU-ish bound: the oldest entry goes first. */
function remember<V>(cache: Map<string, V>, key: string, value: V, max: number): void {
  cache.delete(key);
  cache.set(key, value);
  while (cache.size > max) {
    const oldest = cache.keys().next().value;
    if (oldest === undefined) break;
    cache.delete(oldest);
  }
}
