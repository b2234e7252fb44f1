/**
 * The vault port: account numbers are sealed before anything is written and
 * opened only where a plaintext is truly needed. The adapter (KMS envelope
 * encryption, shared/aws/kms-vault.ts) decides how; the domain only says what
 * a sealed value is bound to.
 */

/** Non-secret ids a sealed value is bound to; opening with other ids fails. */
export interface VaultBinding {
  organizationId: string;
  /** The record holding the value: a paymethod (`mth_`) or one-time (`ott_`) token. */
  recordToken: string;
}

/** Everything needed to open a value again, stored with its record. */
export interface SealedSecret {
  /** Scheme version, so the format can evolve without guessing. */
  v: 1;
  /** KMS key that wrapped the data key. */
  key_id: string;
  /** Data key wrapped by KMS (its encryption context names the organization). */
  encrypted_data_key: Uint8Array;
  iv: Uint8Array;
  ciphertext: Uint8Array;
  tag: Uint8Array;
}

export interface Vault {
  seal(plaintext: string, binding: VaultBinding): Promise<SealedSecret>;
  /** UnreadableSecret when the value can never be opened as stored; any other error may pass. */
  open(sealed: SealedSecret, binding: VaultBinding): Promise<string>;
}

/**
 * A sealed value that no retry will open: its bytes were changed, it is bound
 * to another record, or the key service refuses its wrapped key as invalid.
 * A property of the stored record, not of the moment.
 */
export class UnreadableSecret extends Error {
  constructor(reason: string) {
    super(`the sealed value cannot be opened: ${reason}`);
    this.name = 'UnreadableSecret';
  }
}
