import { InvalidRequest } from '../errors.ts';
import type { AccountUpdateHistory, AccountUpdateRecord, ReportWriter, WorkbookWriter } from './ports.ts';

/**
 * The monthly report's columns, in order (documented in docs/account-updater.md),
 * each with the history member it shows. The time column says what it holds:
 * the time of application, ISO 8601 in UTC. `previous_*` are the card as it
 * was before the file changed it.
 */
const COLUMNS = [
  ['au_updated_date_utc', 'au_updated_date'],
  ['paymethod_token', 'paymethod_token'],
  ['location_id', 'location_id'],
  ['customer_token', 'customer_token'],
  ['customer_id', 'customer_id'],
  ['card_type', 'card_type'],
  ['au_code', 'au_code'],
  ['au_description', 'au_description'],
  ['previous_last_4_account_number', 'previous_last_4_account_number'],
  ['last_4_account_number', 'last_4_account_number'],
  ['previous_expire_month', 'previous_expire_month'],
  ['previous_expire_year', 'previous_expire_year'],
  ['expire_month', 'expire_month'],
  ['expire_year', 'expire_year'],
] as const satisfies ReadonlyArray<readonly [string, keyof AccountUpdateRecord]>;

export const REPORT_COLUMNS = COLUMNS.map(([column]) => column);

const MONTH = /^([0-9]{4})-(0[1-9]|1[0-2])$/;
/** RFC 4180 line ending. */
const EOL = '\r\n';
/** Lines are handed to the writer in chunks of about this many characters. */
const CHUNK_CHARS = 64 * 1024;

export function isMonth(value: string): boolean {
  return MONTH.test(value);
}

/** `yyyy-mm` of the month before `date` (UTC): what the schedule on day 1 exports. */
export function previousMonth(date: Date): string {
  const first = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() - 1, 1));
  return first.toISOString().slice(0, 7);
}

export function reportKey(organizationId: string, month: string, format: 'csv' | 'xlsx' = 'csv'): string {
  return `au-reports/${organizationId}/${month}.${format}`;
}

export interface ExportResult {
  month: string;
  keys: string[];
}

/**
 * Writes, for every organization with updates in `month`, its updates as a
 * CSV and as a workbook (header, then one row per applied update, oldest
 * first, ties by token). Everything in a file comes from the history items,
 * nothing from the time of the run, so running a month again writes the
 * same CSV bytes and the same cells. Each file is one pass over the history
 * (two Queries per shard instead of one, and no row held in memory).
 */
export async function exportAccountUpdates(month: string, deps: { history: AccountUpdateHistory; reports: ReportWriter; workbooks: WorkbookWriter }): Promise<ExportResult> {
  if (!isMonth(month)) throw new InvalidRequest([{ field: 'month', message: 'must be yyyy-mm' }]);
  const keys: string[] = [];
  for await (const organizationId of deps.history.organizationsWithUpdates(month)) {
    const updates = deps.history.updatesOf(organizationId, month)[Symbol.asyncIterator]();
    const first = await updates.next();
    // Marked but nothing recorded (a run stopped between the two writes): no file.
    if (first.done) continue;
    const key = reportKey(organizationId, month);
    await deps.reports.write(key, reportLines(first.value, updates));
    const workbookKey = reportKey(organizationId, month, 'xlsx');
    await deps.workbooks.writeWorkbook(workbookKey, { name: `Account updates ${month}`, columns: REPORT_COLUMNS, created: new Date(`${month}-01T00:00:00.000Z`) }, reportRows(deps.history.updatesOf(organizationId, month)));
    keys.push(key, workbookKey);
  }
  return { month, keys };
}

async function* reportRows(updates: AsyncIterable<AccountUpdateRecord>): AsyncGenerator<string[]> {
  for await (const update of updates) yield reportCells(update);
}

/** A record's cells, as text: last fours keep their leading zeros, and nothing is a number a spreadsheet may reformat. */
export function reportCells(update: AccountUpdateRecord): string[] {
  return COLUMNS.map(([, member]) => {
    const value = update[member];
    return value === undefined || value === null ? '' : String(value);
  });
}

async function* reportLines(first: AccountUpdateRecord, rest: AsyncIterator<AccountUpdateRecord>): AsyncGenerator<string> {
  let chunk = REPORT_COLUMNS.join(',') + EOL + reportLine(first);
  for (let next = await rest.next(); !next.done; next = await rest.next()) {
    chunk += reportLine(next.value);
    if (chunk.length >= CHUNK_CHARS) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

export function reportLine(update: AccountUpdateRecord): string {
  return reportCells(update).map((cell) => csvField(spreadsheetSafe(cell))).join(',') + EOL;
}

/**
 * A cell a spreadsheet would read as a formula (=, +, -, @, or a tab or
 * carriage return first: OWASP's list) gets a leading apostrophe, which
 * spreadsheets show as text and do not display. Only text a merchant chose
 * (customer_id, location_id, customer_token) can start so; ids, codes,
 * dates and digits never do.
 */
export function spreadsheetSafe(cell: string): string {
  return /^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell;
}

/** RFC 4180: quoted only when needed. */
export function csvField(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
