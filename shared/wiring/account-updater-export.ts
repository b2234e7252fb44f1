import { S3WorkbookWriter } from '#shared/aws/report-workbooks.ts';
import { s3 } from '#shared/aws/s3.ts';
import { config } from '#shared/runtime/config.ts';
import { exportHistoryDeps } from './account-updater.ts';
import { once } from './once.ts';

/**
 * The monthly export's adapters. A module of its own because the workbook
 * writer brings exceljs (about 1 MB of bundle): the other Account Updater
 * functions import account-updater.ts and must not carry it.
 */
const workbooks = /* @__PURE__ */ once(() => new S3WorkbookWriter(s3, config.reportsBucket));

export const exportDeps = () => ({ ...exportHistoryDeps(), workbooks: workbooks() });
