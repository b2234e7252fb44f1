import { dynamo } from '#shared/aws/dynamodb.ts';
import { kms } from '#shared/aws/kms.ts';
import { KmsFingerprinter } from '#shared/aws/kms-fingerprints.ts';
import { KmsVault } from '#shared/aws/kms-vault.ts';
import { S3ReportWriter } from '#shared/aws/reports.ts';
import { s3 } from '#shared/aws/s3.ts';
import { config } from '#shared/config.ts';
import type { ApplyDeps } from '#shared/domain/account-updater/apply.ts';
import { DynamoAccountUpdaterStore } from '#shared/store/account-updater.ts';

/**
 * The Account Updater's adapters, shared by the Lambda functions and the CLIs
 * (which apply their target's environment before importing this). Built on
 * first use: the export never builds the vault, so it needs no key grant.
 */
let store: DynamoAccountUpdaterStore | undefined;
let vault: KmsVault | undefined;
let fingerprinter: KmsFingerprinter | undefined;
const accountUpdaterStore = () => (store ??= new DynamoAccountUpdaterStore(dynamo, config.tableName));

export const clock = (): Date => new Date();

export function applyDeps(): ApplyDeps {
  return {
    store: accountUpdaterStore(),
    vault: (vault ??= new KmsVault(kms, config.vaultKeyId)),
    fingerprinter: (fingerprinter ??= new KmsFingerprinter(kms, config.fingerprintKeyId)),
    clock,
  };
}

export function exportDeps() {
  return { history: accountUpdaterStore(), reports: new S3ReportWriter(s3, config.reportsBucket) };
}
