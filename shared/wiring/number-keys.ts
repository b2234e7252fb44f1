import { kms } from '#shared/aws/kms.ts';
import { KmsFingerprinter } from '#shared/aws/kms-fingerprints.ts';
import { KmsVault } from '#shared/aws/kms-vault.ts';
import { config } from '#shared/runtime/config.ts';
import type { Fingerprinter } from '#shared/domain/paymethods/fingerprints.ts';
import type { Vault } from '#shared/domain/vault.ts';
import { once } from './once.ts';

/**
 * The adapters of the account-number keys, one each per container, for every
 * feature that seals, opens or fingerprints a number (paymethods, one-time
 * tokens, the Account Updater, the fingerprint backfill). Built on first use:
 * a function that never calls them needs no grant on their keys.
 */
export const vault = /* @__PURE__ */ once((): Vault => new KmsVault(kms, config.vaultKeyId));
export const fingerprinter = /* @__PURE__ */ once((): Fingerprinter => new KmsFingerprinter(kms, config.fingerprintKeyId));
