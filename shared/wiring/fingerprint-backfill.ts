import { dynamo } from '#shared/aws/dynamodb.ts';
import { config } from '#shared/runtime/config.ts';
import { DynamoFingerprintBackfillStore } from '#shared/store/fingerprint-backfill.ts';
import { fingerprinter, vault } from './number-keys.ts';

/** The fingerprint backfill's adapters (scripts/backfill-fingerprints.ts applies its target first); the keys are the paymethod routes' own. */
export function backfillDeps() {
  return { store: new DynamoFingerprintBackfillStore(dynamo, config.tableName), vault: vault(), fingerprinter: fingerprinter() };
}
