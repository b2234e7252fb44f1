import { isDigits, isExpiryCurrentOrFuture, passesLuhn } from '../paymethods/rules.ts';

/** The contract's update codes and the description each sets. */
export const AU_CODES = {
  new: 'New account number',
  exp: 'New expiration date',
  cls: 'Account closed',
  con: 'Contact cardholder',
} as const;
export type AuCode = keyof typeof AU_CODES;

export const AU_HEADER = ['paymethod_token', 'au_code', 'account_number', 'expire_month', 'expire_year'] as const;

/**
 * A row as the file reader hands it over: its line (the header is line 1),
 * its cells in column order, or why it could not be read as CSV.
 */
export interface SourceRow {
  line: number;
  fields: string[];
  error?: string;
}

/** One well-formed row of an update file; empty cells are absent members (value unchanged). */
export interface UpdateRow {
  line: number;
  paymethodToken: string;
  code: AuCode;
  accountNumber?: string;
  expireMonth?: number;
  expireYear?: number;
}

/** A row reported and not applied. */
export interface RowError {
  line: number;
  /** The row's token cell when it is a well-formed token (quotedToken), else ''. */
  paymethod_token: string;
  reason: string;
}

const TOKEN = /^mth_[A-Za-z0-9]{1,22}$/;

/**
 * A token as the file may name one: `mth_` and up to 22 ASCII letters and
 * digits, with no run of 12 digits (that is a card number behind a prefix; a
 * generated token has one with a chance under 1 in 10^8).
 */
export function isWellFormedToken(cell: string): boolean {
  return TOKEN.test(cell) && !/[0-9]{12}/.test(cell);
}

export function isAuCode(value: string): value is AuCode {
  return Object.hasOwn(AU_CODES, value);
}

/** Whether the first record is the contract's header, exactly (quoting aside). */
export function isHeader(record: SourceRow): boolean {
  return !record.error && record.fields.length === AU_HEADER.length && AU_HEADER.every((name, index) => record.fields[index] === name);
}

/**
 * Everything about a row that can be decided without the store. Every problem
 * of the row is named (joined with "; "), so one pass over a file tells its
 * sender all that is wrong with each line.
 */
export function parseRow(record: SourceRow, now: Date): { row: UpdateRow } | { error: RowError } {
  const token = (record.fields[0] ?? '').trim();
  const fail = (reason: string) => ({ error: { line: record.line, paymethod_token: quotedToken(token), reason } });
  if (record.error) return fail(`malformed row: ${record.error}`);
  if (record.fields.length !== AU_HEADER.length) return fail(`wrong column count: expected ${AU_HEADER.length}, got ${record.fields.length}`);

  const [, rawCode, rawNumber, rawMonth, rawYear] = record.fields.map((field) => field.trim()) as [string, string, string, string, string];
  const reasons: string[] = [];
  if (token === '') reasons.push('missing paymethod_token');
  else if (!isWellFormedToken(token)) reasons.push('unknown token');
  const code = rawCode.toLowerCase();
  if (!isAuCode(code)) reasons.push(`bad code: ${rawCode === '' ? 'missing' : 'unknown'}, expected one of ${Object.keys(AU_CODES).join(', ')}`);
  // Never echo the number: the reason must be safe to log and to write next to the file.
  if (rawNumber !== '' && !(isDigits(rawNumber) && rawNumber.length >= 12 && rawNumber.length <= 16 && passesLuhn(rawNumber))) {
    reasons.push('bad number: must be 12 to 16 digits passing the Luhn check');
  }
  const month = rawMonth === '' ? undefined : parseMonth(rawMonth);
  const year = rawYear === '' ? undefined : parseYear(rawYear);
  if (month === null) reasons.push('malformed expiry: expire_month must be 1 to 12');
  if (year === null) reasons.push('malformed expiry: expire_year must be a four-digit year');
  if (typeof month === 'number' && typeof year === 'number' && !isExpiryCurrentOrFuture(month, year, now)) reasons.push(pastExpiry(month, year));
  if (reasons.length > 0) return fail(reasons.join('; '));

  return {
    row: {
      line: record.line,
      paymethodToken: token,
      code: code as AuCode,
      ...(rawNumber !== '' ? { accountNumber: rawNumber } : {}),
      ...(typeof month === 'number' ? { expireMonth: month } : {}),
      ...(typeof year === 'number' ? { expireYear: year } : {}),
    },
  };
}

/**
 * The token cell as an error may quote it: a well-formed token, else ''.
 * Any other cell may be a card number in a spelling no pattern foresees
 * (dots, slashes, NBSP, full-width digits...), so none is ever copied into a
 * summary, an errors file, a log or a stored object. Every later step sees
 * only a parsed row's token, which is well-formed, or this.
 */
function quotedToken(cell: string): string {
  return isWellFormedToken(cell) ? cell : '';
}

export function pastExpiry(month: number, year: number): string {
  return `past expiry: ${String(month).padStart(2, '0')}/${year} is before the current month`;
}

function parseMonth(value: string): number | null {
  if (!/^[0-9]{1,2}$/.test(value)) return null;
  const month = Number(value);
  return month >= 1 && month <= 12 ? month : null;
}

/** As on the API: four digits, or two meaning 20yy. */
function parseYear(value: string): number | null {
  if (/^[0-9]{4}$/.test(value)) return Number(value) >= 2000 ? Number(value) : null;
  if (/^[0-9]{2}$/.test(value)) return 2000 + Number(value);
  return null;
}
