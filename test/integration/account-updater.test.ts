import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, MERCHANT, PARTNER, UNRELATED } from '../support/api.ts';
import { npmScript } from '../support/cli.ts';
import { CARD, createCard, ECHECK, locationPath, post, resultsOf, unique } from '../support/paymethods.ts';

const ORG = MERCHANT.organizationId;
const HEADER = 'paymethod_token,au_code,account_number,expire_month,expire_year';
const NEW_NUMBER = '4012888888881881';
let dir: string;

async function updateFile(name: string, content: string | Buffer): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, content);
  return file;
}

async function apply(file: string, ...flags: string[]) {
  const result = await npmScript('au:apply', file, ...flags);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as { applied: number; skipped: number; errors: Array<{ line: number; paymethod_token: string; reason: string }>; notes: Array<{ line: number; paymethod_token: string; reason: string }> };
}

const day = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
const reportQuery = (start: string, end: string) => `?page_size=1000&filter=${encodeURIComponent(`start_au_updated_date eq '${start}' and end_au_updated_date eq '${end}'`)}`;
const cardOf = async (loc: string, token: unknown) => (await call(`${locationPath(ORG, loc)}/paymethods/${String(token)}`)).body.card as Record<string, unknown>;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'au-test-'));
});
afterAll(async () => {
  const { rm } = await import('node:fs/promises');
  await rm(dir, { recursive: true, force: true });
});

describe('Account Updater: applying a file with the CLI against the running service', () => {
  const loc = unique('loc_');
  const cards: Record<string, string> = {};

  beforeAll(async () => {
    for (const name of ['a', 'b', 'c', 'bad']) cards[name] = (await createCard(ORG, loc, undefined)).paymethod_token as string;
    cards.suppressed = (await post(`${locationPath(ORG, loc)}/paymethods`, { card: { ...CARD, suppress_account_updater: 'true' } })).body.paymethod_token as string;
    cards.echeck = (await post(`${locationPath(ORG, loc)}/paymethods`, { echeck: ECHECK })).body.paymethod_token as string;
    cards.other = (await post(`${locationPath(UNRELATED.organizationId, loc)}/paymethods`, { card: CARD }, { as: UNRELATED })).body.paymethod_token as string;
  });

  it('stores and returns suppress_account_updater, given as a boolean or a string', async () => {
    expect(await cardOf(loc, cards.suppressed)).toMatchObject({ suppress_account_updater: true });
    const updated = await call(`${locationPath(ORG, loc)}/paymethods/${cards.bad}`, { method: 'PUT', body: { card: { suppress_account_updater: false } } });
    expect(updated.status, updated.text).toBe(200);
    expect((updated.body.card as Record<string, unknown>).suppress_account_updater).toBe(false);
    const wrong = await call(`${locationPath(ORG, loc)}/paymethods/${cards.bad}`, { method: 'PUT', body: { card: { suppress_account_updater: 'yes' } } });
    expect(wrong.status).toBe(400);
  });

  it('shows progress and a closing line on standard error, leaving standard output the JSON summary', async () => {
    const rows = [HEADER, 'mth_doesnotexist0000000001,exp,,01,2033', 'mth_doesnotexist0000000002,exp,,01,2033', 'mth_doesnotexist0000000003,exp,,01,2033'];
    const result = await npmScript('au:apply', await updateFile('progress.csv', `${rows.join('\n')}\n`));
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ applied: 0, skipped: 0, error_count: 3 });
    // Not a terminal here: whole lines, the first when the file is checked and the last when it is done.
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('0/3 rows (0%), 0 rows/s, 0 errors, 0s in, estimating time left');
    expect(lines.at(-2)).toMatch(/^3\/3 rows \(100%\), \d+ rows\/s, 3 errors, \d+s in, done$/);
    expect(lines.at(-1)).toMatch(/^au:apply: applied 0, skipped 0, 3 errors in 3 rows, \d+s \(\d+ rows\/s\)$/);
  });

  it('applies good rows and reports every bad one (BOM, CRLF, quotes, scoped to the organization); re-applying changes nothing', async () => {
    const { a, b, c, bad, suppressed, echeck, other } = cards;
    const rows = [
      HEADER,
      `${a},new,${NEW_NUMBER},,`, // 2 applied
      `"${b}","exp","","06","2032"`, // 3 applied
      `${c},cls,,,`, // 4 superseded by line 5
      `${c},con,,,`, // 5 applied
      `${suppressed},new,${NEW_NUMBER},,`, // 6 suppressed
      `${other},new,${NEW_NUMBER},,`, // 7 another organization's card
      'mth_doesnotexist0000000000,new,,,', // 8 unknown token
      `${bad},new,4111111111111112,,`, // 9 bad number (Luhn)
      `${bad},upd,,,`, // 10 bad code
      `${bad},exp,,01,2020`, // 11 past expiry
      `${bad},exp,,1`, // 12 missing column
      `${bad},exp,,1,2032,x`, // 13 extra column
      `${bad},exp,,13,2032`, // 14 malformed expiry
      `${echeck},new,${NEW_NUMBER},,`, // 15 not a card
    ];
    const file = await updateFile('scoped.csv', `\uFEFF${rows.join('\r\n')}\r\n`);
    const summary = await apply(file, '--org', ORG);
    expect(summary).toEqual({
      applied: 3,
      skipped: 2,
      errors: [
        { line: 7, paymethod_token: other, reason: `unknown token in ${ORG}` },
        { line: 8, paymethod_token: 'mth_doesnotexist0000000000', reason: `unknown token in ${ORG}` },
        { line: 9, paymethod_token: bad, reason: 'bad number: must be 12 to 16 digits passing the Luhn check' },
        { line: 10, paymethod_token: bad, reason: 'bad code: unknown, expected one of new, exp, cls, con' },
        { line: 11, paymethod_token: bad, reason: 'past expiry: 01/2020 is before the current month' },
        { line: 12, paymethod_token: bad, reason: 'wrong column count: expected 5, got 4' },
        { line: 13, paymethod_token: bad, reason: 'wrong column count: expected 5, got 6' },
        { line: 14, paymethod_token: bad, reason: 'malformed expiry: expire_month must be 1 to 12' },
        { line: 15, paymethod_token: echeck, reason: 'not a card: the paymethod is an echeck' },
      ],
      error_count: 9,
      notes: [
        { line: 4, paymethod_token: c, reason: 'superseded by line 5' },
        { line: 6, paymethod_token: suppressed, reason: 'suppressed: suppress_account_updater is true' },
      ],
    });
    expect(JSON.stringify(summary)).not.toContain(NEW_NUMBER);

    const cardA = await cardOf(loc, a);
    expect(cardA).toMatchObject({ last_4_account_number: '1881', masked_account_number: '****1881', expire_month: 12, expire_year: 2031, au_code: 'new', au_description: 'New account number' });
    expect(Date.now() - Date.parse(cardA.au_updated_date as string)).toBeLessThan(120_000);
    expect(cardA.au_updated_date).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(await cardOf(loc, b)).toMatchObject({ last_4_account_number: '1111', expire_month: 6, expire_year: 2032, au_code: 'exp', au_description: 'New expiration date' });
    expect(await cardOf(loc, c)).toMatchObject({ au_code: 'con', au_description: 'Contact cardholder' });
    for (const token of [suppressed, bad]) expect((await cardOf(loc, token)).au_code).toBeUndefined();
    const othersCard = await call(`${locationPath(UNRELATED.organizationId, loc)}/paymethods/${other}`, { as: UNRELATED });
    expect((othersCard.body.card as Record<string, unknown>).last_4_account_number).toBe('1111');

    const again = await apply(file, '--org', ORG);
    expect(again).toMatchObject({ applied: 0, skipped: 5 });
    expect(again.errors).toEqual(summary.errors);
    expect((await cardOf(loc, a)).au_updated_date).toBe(cardA.au_updated_date);
  }, 180_000);

  it('serves the report from the sparse indexes, at organization and location level', async () => {
    const { a, b, c, suppressed, bad, echeck } = cards;
    const locationReport = await call(`${locationPath(ORG, loc)}/paymethods${reportQuery(day(-1), day(1))}`);
    expect(locationReport.status, locationReport.text).toBe(200);
    const results = resultsOf(locationReport);
    expect(results.map((item) => item.paymethod_token).sort()).toEqual([a, b, c].sort());
    for (const item of results) expect(item.card).toMatchObject({ au_updated_date: expect.any(String), au_code: expect.any(String), au_description: expect.any(String) });
    expect(locationReport.body.search_criteria).toMatchObject({ resource_specific: { start_au_updated_date: `${day(-1)}T00:00:00`, end_au_updated_date: `${day(1)}T23:59:59` } });

    const organizationReport = await call(`/v3/organizations/${ORG}/paymethods/${reportQuery(day(0), day(0))}`, { as: PARTNER });
    expect(organizationReport.status, organizationReport.text).toBe(200);
    const tokens = resultsOf(organizationReport).map((item) => item.paymethod_token);
    expect(tokens).toEqual(expect.arrayContaining([a, b, c]));
    for (const token of [suppressed, bad, echeck]) expect(tokens).not.toContain(token);

    const before = await call(`/v3/organizations/${ORG}/paymethods${reportQuery('2020-01-01', day(-2))}`);
    expect(resultsOf(before).map((item) => item.paymethod_token)).not.toContain(a);
  });

  it("applies another organization's card when the file is not scoped", async () => {
    const file = await updateFile('unscoped.csv', `${HEADER}\n${cards.other},exp,,9,2034\n`);
    expect(await apply(file)).toEqual({ applied: 1, skipped: 0, errors: [], error_count: 0, notes: [] });
    const answer = await call(`${locationPath(UNRELATED.organizationId, loc)}/paymethods/${cards.other}`, { as: UNRELATED });
    expect(answer.body.card).toMatchObject({ expire_month: 9, expire_year: 2034, au_code: 'exp' });
  }, 180_000);

  it('leaves what a newer file changed when an older file is applied again', async () => {
    const token = (await createCard(ORG, loc, undefined)).paymethod_token as string;
    const older = await updateFile('older.csv', `${HEADER}\n${token},exp,,1,2031\n`);
    const newer = await updateFile('newer.csv', `${HEADER}\n${token},exp,,6,2032\n`);
    expect(await apply(older)).toMatchObject({ applied: 1 });
    expect(await apply(newer)).toMatchObject({ applied: 1 });
    expect(await apply(older)).toEqual({ applied: 0, skipped: 1, errors: [], error_count: 0, notes: [{ line: 2, paymethod_token: token, reason: 'superseded by a later file' }] });
    expect(await cardOf(loc, token)).toMatchObject({ expire_month: 6, expire_year: 2032 });
  }, 180_000);

  it('refuses empty files, a wrong header and a missing file as a whole, with a JSON error', async () => {
    const empty = await npmScript('au:apply', await updateFile('empty.csv', ''));
    expect(empty.code).toBe(1);
    expect(JSON.parse(empty.stderr)).toMatchObject({ error: 'EMPTY_FILE' });
    const bomOnly = await npmScript('au:apply', await updateFile('bom.csv', '\uFEFF\r\n'));
    expect(JSON.parse(bomOnly.stderr)).toMatchObject({ error: 'EMPTY_FILE' });
    const header = await npmScript('au:apply', await updateFile('header.csv', `paymethod_token,au_code,account_number,expire_month\n${cards.a},cls,,\n`));
    expect(header.code).toBe(1);
    expect(JSON.parse(header.stderr)).toMatchObject({ error: 'BAD_HEADER', message: expect.stringContaining(HEADER) });
    expect((await cardOf(loc, cards.a)).au_code).toBe('new');
    const missing = await npmScript('au:apply', path.join(dir, 'nope.csv'));
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.stderr)).toMatchObject({ error: 'USAGE' });
    const badOrg = await npmScript('au:apply', await updateFile('x.csv', `${HEADER}\n`), '--org', '200');
    expect(badOrg.code).toBe(2);
  }, 180_000);
});
