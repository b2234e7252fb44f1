import { InvalidRequest } from '../errors.ts';
import type { AccountUpdateHistory, AccountUpdateRecord, ReportWriter } from './ports.ts';

/** The monthly report's columns, in order (documented in the README). */
export const REPORT_COLUMNS = [
  'au_updated_date',
  'paymethod_token',
  'location_id',
  'customer_token',
  'au_code',
  'au_description',
  'last_4_account_number',
  'expire_month',
  'expire_year',
] as const;

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

export function reportKey(organizationId: string, month: string): string {
  return `au-reports/${organizationId}/${month}.csv`;
}

export interface ExportResult {
  month: string;
  keys: string[];
}

/**
 * Writes, for every organization with updates in `month`, one CSV of its
 * updates (header, then one row per applied update, oldest first, ties by
 * token). Everything in a file comes from the history items, nothing from
 * the time of the run, so running a month again writes the same bytes.
 */
export async function exportAccountUpdates(month: string, deps: { history: AccountUpdateHistory; reports: ReportWriter }): Promise<ExportResult> {
  if (!isMonth(month)) throw new InvalidRequest([{ field: 'month', message: 'must be yyyy-mm' }]);
  const keys: string[] = [];
  for await (const organizationId of deps.history.organizationsWithUpdates(month)) {
    const updates = deps.history.updatesOf(organizationId, month)[Symbol.asyncIterator]();
    const first = await updates.next();
    // Marked but nothing recorded (a run stopped between the two writes): no file.
    if (first.done) continue;
    const key = reportKey(organizationId, month);
    await deps.reports.write(key, reportLines(first.value, updates));
    keys.push(key);
  }
  return { month, keys };
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
  return REPORT_COLUMNS.map((column) => csvField(update[column])).join(',') + EOL;
}

/** RFC 4180: quoted only when needed. */
export function csvField(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
