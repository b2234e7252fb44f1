import { dynamo } from '#shared/aws/dynamodb.ts';
import { kms } from '#shared/aws/kms.ts';
import { KmsFingerprinter } from '#shared/aws/kms-fingerprints.ts';
import { KmsVault } from '#shared/aws/kms-vault.ts';
import { config } from '#shared/runtime/config.ts';
import type { Fingerprinter } from '#shared/domain/paymethods/fingerprints.ts';
import type { Vault } from '#shared/domain/vault.ts';
import { DynamoPaymethodStore } from '#shared/store/paymethods.ts';
import { once } from './once.ts';

/**
 * The adapters over stored card and account data, built here alone: the
 * paymethod routes, the Account Updater and the fingerprint backfill all
 * take them from this module, so each is built one way, once per container.
 */
export const paymethodStore = /* @__PURE__ */ once(() => new DynamoPaymethodStore(dynamo, config.tableName, config.tableIndexStandIns));
export const vault = /* @__PURE__ */ once((): Vault => new KmsVault(kms, config.vaultKeyId));
export const fingerprinter = /* @__PURE__ */ once((): Fingerprinter => new KmsFingerprinter(kms, config.fingerprintKeyId));
