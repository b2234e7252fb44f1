import { dynamo } from '#shared/aws/dynamodb.ts';
import { S3BatchResults, S3ReportWriter, S3RunObjects } from '#shared/aws/reports.ts';
import { s3 } from '#shared/aws/s3.ts';
import { config } from '#shared/runtime/config.ts';
import type { BatchDeps } from '#shared/domain/account-updater/apply.ts';
import { DynamoAccountUpdaterStore } from '#shared/store/account-updater.ts';
import { DynamoCardUpdates } from '#shared/store/card-updates.ts';
import { fingerprinter, vault } from './number-keys.ts';
import { once } from './once.ts';

/**
 * The Account Updater's adapters, shared by its Lambda functions, the local
 * engine and the CLIs (which apply their target's environment before
 * importing this). Built on first use: the export and the merge never build
 * the vault, so they need no key grant. The card data adapters are the
 * vault and fingerprinter the paymethod routes use (number-keys.ts).
 */
const historyLog = /* @__PURE__ */ once(() => new DynamoAccountUpdaterStore(dynamo, { history: config.auHistoryTableName }));
const history = /* @__PURE__ */ once(() => new DynamoAccountUpdaterStore(dynamo, { history: config.auHistoryTableName, legacy: config.tableName }));
const cards = /* @__PURE__ */ once(() => new DynamoCardUpdates(dynamo, config.tableName));
const batchResults = /* @__PURE__ */ once(() => new S3BatchResults(s3, config.reportsBucket));
const reports = /* @__PURE__ */ once(() => new S3ReportWriter(s3, config.reportsBucket));
/** The run's own objects, in the bucket its event names: the uploaded file, its ranges, its summary. */
const runObjects = /* @__PURE__ */ once(() => new S3RunObjects(s3));

export const clock = (): Date => new Date();

export const batchDeps = (): BatchDeps & { results: S3BatchResults; objects: S3RunObjects } => ({
  cards: cards(),
  log: historyLog(),
  vault: vault(),
  fingerprinter: fingerprinter(),
  results: batchResults(),
  objects: runObjects(),
});
export const checkDeps = () => ({ files: historyLog(), objects: runObjects() });
export const mergeDeps = () => ({ results: batchResults(), reports: reports(), objects: runObjects() });
/** The export's history and CSV writer; its workbook writer is wired in account-updater-export.ts, which only the export imports. */
export const exportHistoryDeps = () => ({ history: history(), reports: reports() });
