import { dynamo } from '#shared/aws/dynamodb.ts';
import { kms } from '#shared/aws/kms.ts';
import { KmsFingerprinter } from '#shared/aws/kms-fingerprints.ts';
import { KmsVault } from '#shared/aws/kms-vault.ts';
import { config } from '#shared/runtime/config.ts';
import { DynamoFingerprintBackfillStore } from '#shared/store/fingerprint-backfill.ts';

/** The fingerprint backfill's adapters (scripts/backfill-fingerprints.ts applies its target first). */
export function backfillDeps() {
  return {
    store: new DynamoFingerprintBackfillStore(dynamo, config.tableName),
    vault: new KmsVault(kms, config.vaultKeyId),
    fingerprinter: new KmsFingerprinter(kms, config.fingerprintKeyId),
  };
}
