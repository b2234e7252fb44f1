import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import { useRuntimeEnvironment } from '../support/api.ts';
import { npmScript } from '../support/cli.ts';
import { unique } from '../support/paymethods.ts';

/**
 * The monthly export's exact bytes. Cards are written straight into the
 * runtime's table (real key layout, numbers sealed by the real vault) for
 * three fresh organizations, updated by the apply use case with a fixed
 * clock in a month nothing else touches, then exported with the CLI.
 */
describe('Account Updater monthly export', () => {
  const MONTH = '2030-01';
  const orgs = [unique('org_ex'), unique('org_ex'), unique('org_ex')].sort() as [string, string, string];
  /** Sorts after the three: its file comes last. */
  const unshardedOrg = `${orgs[2]}_unsharded`;
  // A letter between the number and the random hex: a run of 12 digits reads as a card number behind the prefix (rows.ts).
  const token = (n: number) => `mth_export${String(n).padStart(4, '0')}x${unique('').slice(0, 8)}`;
  const tokens = [token(1), token(2), token(3), token(4)] as const;
  let s3: S3Client;
  let bucket: string;

  beforeAll(async () => {
    const environment = useRuntimeEnvironment();
    bucket = environment.REPORTS_BUCKET!;
    s3 = new S3Client({ forcePathStyle: true });
    const { dynamo } = await import('#shared/aws/dynamodb.ts');
    const { paymethodItem } = await import('#shared/store/paymethod-item.ts');
    const { applyBatch } = await import('#shared/domain/account-updater/apply.ts');
    const { batchDeps } = await import('#shared/wiring/account-updater.ts');
    const deps = batchDeps();

    const owners: Array<[string, string, string | undefined]> = [
      [tokens[0], orgs[0], 'cst_first'],
      [tokens[1], orgs[0], undefined],
      [tokens[2], orgs[1], undefined],
      [tokens[3], orgs[2], 'cst_third'],
    ];
    const items = [];
    for (const [paymethodToken, organizationId, customerToken] of owners) {
      const record: Paymethod = {
        paymethod_token: paymethodToken,
        organization_id: organizationId,
        location_id: 'loc_export',
        ...(customerToken ? { customer_token: customerToken } : {}),
        paymethod_type: 'card',
        card: { card_type: 'visa', name_on_card: 'Export Card', last_4_account_number: '1111', masked_account_number: '****1111', expire_month: 12, expire_year: 2031 },
        is_default: false,
        created_at: '2029-06-01T00:00:00.000Z',
        updated_at: '2029-06-01T00:00:00.000Z',
        version: 1,
      };
      items.push({ PutRequest: { Item: paymethodItem(record, await deps.vault.seal('4111111111111111', { organizationId, recordToken: paymethodToken })) } });
    }
    await dynamo.send(new BatchWriteCommand({ RequestItems: { [environment.TABLE_NAME!]: items } }));

    // One batch of the apply step (the chunk function's use case) at a fixed time of application.
    const apply = (at: string, ...rows: string[]) =>
      applyBatch(
        rows.map((row, index) => ({ line: index + 2, fields: row.split(',') })),
        { file_id: unique('file'), run_id: unique('run'), applied_at: at, first_applied_at: at },
        deps,
      );
    const first = await apply('2030-01-10T08:00:00.000Z', `${tokens[1]},new,4012888888881881,3,2033`, `${tokens[0]},exp,,4,2032`, `${tokens[2]},cls,,,`);
    expect(first).toMatchObject({ applied: 3, errors: [] });
    const second = await apply('2030-01-31T23:59:59.999Z', `${tokens[0]},con,,,`, `${tokens[3]},new,4000000000070005,,`);
    expect(second).toMatchObject({ applied: 2, errors: [] });
    // Another month: not in this export.
    await apply('2030-02-01T00:00:00.000Z', `${tokens[2]},con,,,`);

    // The first organization's month again, for an organization whose history is where and how releases before
    // the history table wrote it: in the paymethod table, one unsharded partition, version in the sort key. Its
    // file must be byte-identical.
    const { DynamoAccountUpdaterStore } = await import('#shared/store/account-updater.ts');
    const history = new DynamoAccountUpdaterStore(dynamo, { history: environment.AU_HISTORY_TABLE_NAME! });
    const legacy = [];
    let version = 2;
    for await (const update of history.updatesOf(orgs[0], MONTH)) {
      legacy.push({ PutRequest: { Item: { pk: `AUHIST#${unshardedOrg}#${MONTH}`, sk: `${update.au_updated_date}#${update.paymethod_token}#v${String(version++).padStart(6, '0')}`, entity: 'au-history', ...update, organization_id: unshardedOrg } } });
    }
    legacy.push({ PutRequest: { Item: { pk: `AUMONTH#${MONTH}`, sk: `ORG#${unshardedOrg}`, entity: 'au-month', month: MONTH, organization_id: unshardedOrg } } });
    await dynamo.send(new BatchWriteCommand({ RequestItems: { [environment.TABLE_NAME!]: legacy } }));
  });

  async function read(key: string): Promise<string> {
    const { Body } = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return Body!.transformToString('utf8');
  }

  const HEADER =
    'au_updated_date_utc,paymethod_token,location_id,customer_token,customer_id,card_type,au_code,au_description,' +
    'previous_last_4_account_number,last_4_account_number,previous_expire_month,previous_expire_year,expire_month,expire_year\r\n';
  const expected = () => ({
    [`au-reports/${orgs[0]}/${MONTH}.csv`]:
      HEADER +
      `2030-01-10T08:00:00.000Z,${tokens[0]},loc_export,cst_first,,visa,exp,New expiration date,1111,1111,12,2031,4,2032\r\n` +
      `2030-01-10T08:00:00.000Z,${tokens[1]},loc_export,,,visa,new,New account number,1111,1881,12,2031,3,2033\r\n` +
      // The values before are the card's before the file: this second file's line sees the first file's expiry.
      `2030-01-31T23:59:59.999Z,${tokens[0]},loc_export,cst_first,,visa,con,Contact cardholder,1111,1111,4,2032,4,2032\r\n`,
    [`au-reports/${orgs[1]}/${MONTH}.csv`]: HEADER + `2030-01-10T08:00:00.000Z,${tokens[2]},loc_export,,,visa,cls,Account closed,1111,1111,12,2031,12,2031\r\n`,
    [`au-reports/${orgs[2]}/${MONTH}.csv`]: HEADER + `2030-01-31T23:59:59.999Z,${tokens[3]},loc_export,cst_third,,visa,new,New account number,1111,0005,12,2031,12,2031\r\n`,
  });
  const withWorkbooks = (csvKeys: string[]) => csvKeys.flatMap((key) => [key, key.replace(/\.csv$/, '.xlsx')]);

  it('writes one CSV and one workbook per organization with updates in the month, the CSV byte for byte, and the same bytes when run again', async () => {
    const files = expected();
    for (let run = 0; run < 2; run += 1) {
      const result = await npmScript('au:export', '--month', MONTH);
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({ month: MONTH, keys: withWorkbooks([...Object.keys(files), `au-reports/${unshardedOrg}/${MONTH}.csv`]) });
      for (const [key, content] of Object.entries(files)) expect(await read(key)).toBe(content);
      // The sharded month and the same updates in one unsharded partition give the same bytes.
      expect(await read(`au-reports/${unshardedOrg}/${MONTH}.csv`)).toBe(files[`au-reports/${orgs[0]}/${MONTH}.csv`]);
    }
  }, 180_000);

  it('--out copies the files to a folder; the workbook has the CSV\'s cells, each a text cell in a text column, leading zeros kept', async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'au-export-'));
    try {
      const result = await npmScript('au:export', '--month', MONTH, '--out', folder);
      expect(result.code, result.stderr).toBe(0);
      const printed = JSON.parse(result.stdout) as { keys: string[]; files: string[] };
      expect(printed.files).toEqual(printed.keys.map((key) => path.join(folder, key)));
      const csvKey = `au-reports/${orgs[2]}/${MONTH}.csv`;
      expect(await readFile(path.join(folder, csvKey), 'utf8')).toBe(expected()[csvKey]);

      const ExcelJS = (await import('exceljs')).default;
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.readFile(path.join(folder, csvKey.replace(/\.csv$/, '.xlsx')));
      const sheet = workbook.worksheets[0]!;
      expect(sheet.name).toBe(`Account updates ${MONTH}`);
      const rows = expected()[csvKey]!.trimEnd().split('\r\n').map((line) => line.split(','));
      expect(sheet.rowCount).toBe(rows.length);
      rows.forEach((cells, index) => {
        const row = sheet.getRow(index + 1);
        cells.forEach((cell, column) => {
          const value = row.getCell(column + 1);
          // An empty CSV field is an empty text cell or no cell at all.
          expect(value.text, `${index + 1}:${column + 1}`).toBe(cell);
          if (cell !== '') expect(typeof value.value, `${index + 1}:${column + 1}`).toBe('string');
          expect(sheet.getColumn(column + 1).numFmt).toBe('@');
        });
      });
      expect(sheet.getRow(2).getCell(10).value).toBe('0005');
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  }, 180_000);

  it('writes nothing for a month without updates', async () => {
    const result = await npmScript('au:export', '--month', '1999-01');
    expect(JSON.parse(result.stdout)).toEqual({ month: '1999-01', keys: [] });
  });

  it('refuses a month that is not yyyy-mm as a usage error', async () => {
    for (const month of ['2030-1', '2030-13', 'last', '2030-01-01']) {
      const result = await npmScript('au:export', '--month', month);
      expect(result.code).toBe(2);
      expect(JSON.parse(result.stderr)).toMatchObject({ error: 'USAGE', message: expect.stringContaining('yyyy-mm') });
    }
    expect((await npmScript('au:export')).code).toBe(2);
  });
});

describe('Account Updater history restore', () => {
  it('writes back the missing items of a re-applied file, over BatchGetItem groups, and leaves present ones as they are', async () => {
    const environment = useRuntimeEnvironment();
    const { dynamo } = await import('#shared/aws/dynamodb.ts');
    const { keys } = await import('#shared/store/keys.ts');
    const { DeleteCommand, UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    const { batchDeps, exportHistoryDeps } = await import('#shared/wiring/account-updater.ts');
    const log = batchDeps().log;
    const organizationId = unique('org_restore');
    const month = '2030-02';
    const date = '2030-02-03T04:05:06.789Z';
    const entries = Array.from({ length: 130 }, (_unused, index) => ({
      line: index + 2,
      update: {
        organization_id: organizationId,
        paymethod_token: `mth_restore${String(index).padStart(4, '0')}`,
        au_code: 'exp' as const,
        au_description: 'New expiration date',
        au_updated_date: date,
        last_4_account_number: '1111',
        expire_month: 12,
        expire_year: 2031,
      },
    }));
    await log.markMonth(month, organizationId);
    await log.record(entries);
    const keyOf = (entry: (typeof entries)[number]) => keys.auHistory(organizationId, month, date, entry.update.paymethod_token, entry.line);
    // Lost: one item in each group of 100. Another differs from what the restore would write: it must stay as it is.
    for (const lost of [entries[5]!, entries[120]!]) await dynamo.send(new DeleteCommand({ TableName: environment.AU_HISTORY_TABLE_NAME, Key: keyOf(lost) }));
    await dynamo.send(new UpdateCommand({ TableName: environment.AU_HISTORY_TABLE_NAME, Key: keyOf(entries[7]!), UpdateExpression: 'SET expire_month = :month', ExpressionAttributeValues: { ':month': 1 } }));

    await log.restore(entries);
    const stored = [];
    for await (const update of exportHistoryDeps().history.updatesOf(organizationId, month)) stored.push(update);
    expect(stored).toHaveLength(130);
    const byToken = new Map(stored.map((update) => [update.paymethod_token, update]));
    expect(byToken.get(entries[5]!.update.paymethod_token)).toMatchObject({ expire_month: 12 });
    expect(byToken.get(entries[120]!.update.paymethod_token)).toMatchObject({ expire_month: 12 });
    expect(byToken.get(entries[7]!.update.paymethod_token)).toMatchObject({ expire_month: 1 });
  });
});
