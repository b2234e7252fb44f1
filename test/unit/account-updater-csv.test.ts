import { describe, expect, it } from 'vitest';
import type { CsvRecord } from '#shared/domain/account-updater/csv-reader.ts';
import { CsvEncodingError, csvField, readCsv } from '#shared/domain/account-updater/csv-reader.ts';
import { isHeader, parseRow } from '#shared/domain/account-updater/rows.ts';

async function read(chunks: Array<string | Uint8Array>, maxRecordLength?: number): Promise<CsvRecord[]> {
  const out: CsvRecord[] = [];
  async function* source() {
    yield* chunks;
  }
  for await (const record of readCsv(source(), maxRecordLength ? { maxRecordLength } : {})) out.push(record);
  return out;
}

/** Every split point of `text` into two byte chunks gives the same records. */
async function everySplit(text: string): Promise<CsvRecord[]> {
  const bytes = Buffer.from(text, 'utf8');
  const whole = await read([bytes]);
  for (let at = 0; at <= bytes.length; at += 1) expect(await read([bytes.subarray(0, at), bytes.subarray(at)])).toEqual(whole);
  return whole;
}

const NOW = new Date('2026-05-15T00:00:00Z');

describe('streaming CSV reader', () => {
  it('strips a BOM and reads CRLF, LF and CR line endings, skipping blank lines', async () => {
    const records = await everySplit('\uFEFFa,b\r\nc,d\ne,f\rg,h\r\n\r\n');
    expect(records).toEqual([
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['c', 'd'] },
      { line: 3, fields: ['e', 'f'] },
      { line: 4, fields: ['g', 'h'] },
    ]);
  });

  it('reads quoted fields with commas, doubled quotes and line breaks, keeping physical line numbers', async () => {
    const records = await everySplit('"a,1","say ""hi""","two\r\nlines"\nnext,"",x\n');
    expect(records).toEqual([
      { line: 1, fields: ['a,1', 'say "hi"', 'two\r\nlines'] },
      { line: 3, fields: ['next', '', 'x'] },
    ]);
  });

  it('reports broken quoting and over-long rows on their line and carries on', async () => {
    const records = await read(['a,"b"c,d\nok,1\n"open,2\n'], 100);
    expect(records[0]).toMatchObject({ line: 1, error: 'text after a closing quote' });
    expect(records[1]).toEqual({ line: 2, fields: ['ok', '1'] });
    expect(records[2]).toMatchObject({ line: 3, error: 'a quoted field is not closed' });
    const long = await read([`${'x'.repeat(50)},y\nz\n`], 20);
    expect(long[0]).toMatchObject({ line: 1, error: 'the row is longer than 20 characters' });
    expect(long[1]).toEqual({ line: 2, fields: ['z'] });
  });

  it('refuses bytes that are not UTF-8', async () => {
    await expect(read([Buffer.from([0x61, 0xff, 0x0a])])).rejects.toBeInstanceOf(CsvEncodingError);
  });

  it('writes fields that need quoting, quoted', () => {
    expect(['plain', 'a,b', 'say "x"', 'two\nlines', 7, undefined].map(csvField)).toEqual(['plain', '"a,b"', '"say ""x"""', '"two\nlines"', '7', '']);
  });
});

describe('update rows', () => {
  const row = (...fields: string[]) => parseRow({ line: 2, fields }, NOW);

  it('recognizes the header exactly, quoting aside', () => {
    expect(isHeader({ line: 1, fields: ['paymethod_token', 'au_code', 'account_number', 'expire_month', 'expire_year'] })).toBe(true);
    expect(isHeader({ line: 1, fields: ['paymethod_token', 'code', 'account_number', 'expire_month', 'expire_year'] })).toBe(false);
    expect(isHeader({ line: 1, fields: ['paymethod_token', 'au_code', 'account_number', 'expire_month'] })).toBe(false);
  });

  it('reads a full row and leaves empty cells out', () => {
    expect(row('mth_abc', 'NEW', '4111111111111111', '7', '28')).toEqual({
      row: { line: 2, paymethodToken: 'mth_abc', code: 'new', accountNumber: '4111111111111111', expireMonth: 7, expireYear: 2028 },
    });
    expect(row('mth_abc', 'cls', '', '', '')).toEqual({ row: { line: 2, paymethodToken: 'mth_abc', code: 'cls' } });
  });

  it('names every problem of a row, never echoing the number', () => {
    const result = row('mth_abc', 'xyz', '4111111111111112', '13', '2020');
    expect('error' in result && result.error.reason).toBe(
      'bad code: unknown, expected one of new, exp, cls, con; bad number: must be 12 to 16 digits passing the Luhn check; malformed expiry: expire_month must be 1 to 12',
    );
    expect(JSON.stringify(result)).not.toContain('4111111111111112');
    expect(row('mth_abc', 'exp', '', '1', '2026')).toEqual({ error: { line: 2, paymethod_token: 'mth_abc', reason: 'past expiry: 01/2026 is before the current month' } });
    expect(row('mth_abc', 'exp', '', '5', '2026')).toMatchObject({ row: { expireMonth: 5, expireYear: 2026 } });
    expect(row('mth_abc', 'exp', '', '', '1999')).toMatchObject({ error: { reason: 'malformed expiry: expire_year must be a four-digit year' } });
    expect(row('not-a-token', 'new', '', '', '')).toMatchObject({ error: { reason: 'unknown token' } });
    expect(row('', 'new', '', '', '')).toMatchObject({ error: { reason: 'missing paymethod_token' } });
    expect(row('mth_abc', 'new', '')).toMatchObject({ error: { reason: 'wrong column count: expected 5, got 3' } });
    expect(row('mth_abc', 'new', '', '', '', '')).toMatchObject({ error: { reason: 'wrong column count: expected 5, got 6' } });
    expect(row('mth_abc', 'new', '411111111111', '', '')).toMatchObject({ error: { reason: expect.stringMatching(/^bad number/) } });
  });
});

describe('inbox keys', async () => {
  const { decodeS3Key, inboxFile } = await import('#shared/domain/account-updater/inbox.ts');
  it('scopes au-inbox/org_<id>/ files to the organization and puts the summary under au-results/', () => {
    expect(inboxFile('au-inbox/org_200/2026-05 run.csv')).toEqual({ organizationId: 'org_200', resultKey: 'au-results/org_200/2026-05 run.csv.json' });
    expect(inboxFile('au-inbox/all.CSV')).toEqual({ resultKey: 'au-results/all.CSV.json' });
    expect(inboxFile('au-inbox/partner/file.csv')).toEqual({ resultKey: 'au-results/partner/file.csv.json' });
    expect(inboxFile('au-inbox/org_200.csv')).toEqual({ resultKey: 'au-results/org_200.csv.json' });
    expect(inboxFile('au-results/org_200/x.csv')).toBeUndefined();
    expect(inboxFile('au-inbox/org_200/notes.txt')).toBeUndefined();
    expect(decodeS3Key('au-inbox/org_200/2026-05+run%2B1.csv')).toBe('au-inbox/org_200/2026-05 run+1.csv');
  });
});
