import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkUpdateFile, readUpdateFile, readUpdateRange } from '#shared/account-updater/csv.ts';
import { BATCH_ROWS, MAX_BATCH_BYTES } from '#shared/account-updater/state-machine.ts';
import type { UpdateFileSource } from '#shared/account-updater/csv.ts';
import type { RunContext } from '#shared/domain/account-updater/apply.ts';
import { applyBatch, recordUpdatedAt } from '#shared/domain/account-updater/apply.ts';
import { exportAccountUpdates, previousMonth, REPORT_COLUMNS, spreadsheetSafe } from '#shared/domain/account-updater/export.ts';
import { mergeRun } from '#shared/domain/account-updater/merge.ts';
import type { RunFailure, RunSummary } from '#shared/domain/account-updater/merge.ts';
import type { AccountUpdateLog, AccountUpdateRecord, BatchResult, BatchResults, CardChange, CardUpdates, StoredCard } from '#shared/domain/account-updater/ports.ts';
import type { SourceRow } from '#shared/domain/account-updater/rows.ts';
import { InvalidRequest } from '#shared/domain/errors.ts';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import type { SealedSecret, Vault, VaultBinding } from '#shared/domain/vault.ts';
import { UnreadableSecret } from '#shared/domain/vault.ts';
import { withLuhnDigit } from '../support/card-numbers.ts';

/** A vault that "seals" by binding the plaintext to its ids, so a wrong binding cannot open it. */
class FakeVault implements Vault {
  opened = 0;
  async seal(plaintext: string, binding: VaultBinding): Promise<SealedSecret> {
    return { v: 1, key_id: 'fake', encrypted_data_key: new Uint8Array(), iv: new Uint8Array(), ciphertext: Buffer.from(`${binding.organizationId}|${binding.recordToken}|${plaintext}`), tag: new Uint8Array() };
  }
  async open(sealed: SealedSecret, binding: VaultBinding): Promise<string> {
    this.opened += 1;
    const [org, token, plaintext] = Buffer.from(sealed.ciphertext).toString().split('|');
    if (org !== binding.organizationId || token !== binding.recordToken) throw new UnreadableSecret('binding mismatch');
    return plaintext!;
  }
}

/** The paymethod repository's AU side and the history, in memory, with the same conditional-write rule. */
class FakeStore implements CardUpdates, AccountUpdateLog {
  readonly records = new Map<string, StoredCard>();
  /** Keyed like the history items: date, token, line. */
  readonly history = new Map<string, AccountUpdateRecord>();
  readonly months = new Set<string>();
  conflictsLeft = 0;
  /** Lines of the same run, lower than the write's, that commit just before it: duplicate lines racing in other batches. */
  linesAhead: number[] = [];
  async findCards(tokens: readonly string[]) {
    return new Map(tokens.filter((token) => this.records.has(token)).map((token) => [token, structuredClone(this.records.get(token)!)]));
  }
  /** Like the repository: each change commits on its own (the fake has no transactions to share). */
  async applyAccountUpdates(changes: readonly CardChange[]) {
    const outcomes: Array<'applied' | 'conflict'> = [];
    for (const change of changes) outcomes.push(this.applyOne(change));
    return outcomes;
  }
  private applyOne(change: CardChange) {
    const stored = this.records.get(change.current.paymethod_token)!;
    if (this.conflictsLeft > 0) {
      this.conflictsLeft -= 1;
      stored.paymethod.version += 1;
    }
    const ahead = this.linesAhead.shift();
    if (ahead !== undefined) {
      stored.paymethod.version += 1;
      stored.source = { ...change.source, line: ahead, applied_lines: [ahead] };
    }
    if (stored.paymethod.version !== change.current.version) return 'conflict' as const;
    this.records.set(change.current.paymethod_token, {
      paymethod: { ...stored.paymethod, card: change.card, updated_at: change.updatedAt, version: stored.paymethod.version + 1 },
      ...(change.secret ?? stored.secret ? { secret: change.secret ?? stored.secret! } : {}),
      source: change.source,
    });
    return 'applied' as const;
  }
  async markMonth(month: string, organizationId: string) {
    this.months.add(`${month}#${organizationId}`);
  }
  async record(updates: ReadonlyArray<{ line: number; update: AccountUpdateRecord }>) {
    for (const { line, update } of updates) this.history.set(`${update.au_updated_date}#${update.paymethod_token}#${line}`, update);
  }
  async restore(updates: ReadonlyArray<{ line: number; update: AccountUpdateRecord }>) {
    for (const { line, update } of updates) {
      const key = `${update.au_updated_date}#${update.paymethod_token}#${line}`;
      if (!this.history.has(key)) this.history.set(key, update);
    }
  }
  /** What the export reads: per date and token only the highest line. */
  exported(): AccountUpdateRecord[] {
    const last = new Map<string, AccountUpdateRecord>();
    for (const key of [...this.history.keys()].sort()) last.set(key.slice(0, key.lastIndexOf('#')), this.history.get(key)!);
    return [...last.values()];
  }
}

/** One chunk as a source. */
async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}


/** Whether `text` shows `digits` in some spelling: compatibility forms folded (full-width digits, NBSP), separators dropped. */
function holdsNumber(text: string, digits: string): boolean {
  return text.normalize('NFKC').replace(/[\s._/\\-]/g, '').includes(digits);
}

class MemoryResults implements BatchResults {
  readonly stored = new Map<string, BatchResult>();
  async put(runId: string, result: BatchResult) {
    this.stored.set(`${runId}/${String(result.first_line).padStart(10, '0')}`, result);
  }
  async *list(runId: string) {
    for (const key of [...this.stored.keys()].filter((name) => name.startsWith(`${runId}/`)).sort()) yield this.stored.get(key)!;
  }
}

const HEADER = 'paymethod_token,au_code,account_number,expire_month,expire_year';
const vault = new FakeVault();
/** Fingerprints shaped like the adapter's, without KMS: the number's digest under the organization. */
const fingerprinter = { fingerprint: async (organizationId: string, account: { accountNumber: string }) => `fp_${createHash('sha256').update(`${organizationId}|${account.accountNumber}`).digest('base64url')}` };

async function card(store: FakeStore, token: string, organizationId = 'org_1', extra: Partial<Paymethod['card']> = {}, type: Paymethod['paymethod_type'] = 'card') {
  const paymethod: Paymethod = {
    paymethod_token: token,
    organization_id: organizationId,
    location_id: 'loc_1',
    paymethod_type: type,
    card: { card_type: 'visa', name_on_card: 'Ann', last_4_account_number: '1111', masked_account_number: '****1111', expire_month: 12, expire_year: 2030, ...extra },
    is_default: false,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    version: 1,
  };
  store.records.set(token, { paymethod, secret: await vault.seal('4111111111111111', { organizationId, recordToken: token }) });
}

function file(...lines: string[]): UpdateFileSource {
  const text = lines.join('\r\n');
  return () =>
    (async function* () {
      // Small chunks: rows arrive split across reads.
      for (let at = 0; at < text.length; at += 7) yield Buffer.from(text.slice(at, at + 7));
    })();
}

let runs = 0;
const firstApplied = new Map<string, string>();
const written = new Map<string, string>();
const reports = {
  async write(key: string, body: AsyncIterable<string>) {
    let text = '';
    for await (const chunk of body) text += chunk;
    written.set(key, text);
  },
};

/**
 * The engine's steps with in-memory adapters: check, cut into batches of
 * `batchSize`, apply them in the order `order` gives (the same batch may
 * appear twice: a retry), merge. Batches in `neverApplied` change nothing and
 * leave no result (they failed before a row, or never started); `failure` is
 * the map's failure, handed to the merge.
 */
async function run(
  source: UpdateFileSource,
  store: FakeStore,
  options: { organizationId?: string; batchSize?: number; order?: (batches: SourceRow[][]) => SourceRow[][]; at?: string; loseFirstResultOf?: number[]; neverApplied?: number[]; failure?: RunFailure; results?: MemoryResults } = {},
): Promise<RunSummary> {
  const checked = await checkUpdateFile(source);
  const appliedAt = options.at ?? '2026-05-15T12:00:00.000Z';
  // As the check step records it: the first run's time, for every run of the same file.
  if (!firstApplied.has(checked.file_id)) firstApplied.set(checked.file_id, appliedAt);
  const context: RunContext = {
    file_id: checked.file_id,
    run_id: `run_${(runs += 1)}`,
    applied_at: appliedAt,
    first_applied_at: firstApplied.get(checked.file_id)!,
    ...(options.organizationId ? { organization_id: options.organizationId } : {}),
  };
  const batches: SourceRow[][] = [[]];
  for await (const row of readUpdateFile(source())) {
    if (batches.at(-1)!.length >= (options.batchSize ?? 1000)) batches.push([]);
    batches.at(-1)!.push(row);
  }
  const results = options.results ?? new MemoryResults();
  // A batch whose first result is lost committed its rows, then failed before recording them (it runs again later).
  const toLose = new Set((options.loseFirstResultOf ?? []).map((index) => batches[index]));
  const notRun = new Set((options.neverApplied ?? []).map((index) => batches[index]));
  for (const batch of (options.order ?? ((all) => all))(batches)) {
    if (notRun.has(batch)) continue;
    const result = await applyBatch(batch, context, { cards: store, log: store, vault, fingerprinter, concurrency: 4 });
    if (toLose.delete(batch)) continue;
    await results.put(context.run_id, result);
  }
  return mergeRun({ run_id: context.run_id, records: checked.records, errors_key: `errors/${context.run_id}.csv`, ...(options.failure ? { failure: options.failure } : {}) }, { results, reports });
}

describe('applying an update file in batches', () => {
  it('applies good rows, reports bad ones, and counts each row once', async () => {
    const store = new FakeStore();
    for (const token of ['mth_a', 'mth_b', 'mth_c', 'mth_d', 'mth_sup']) await card(store, token);
    await card(store, 'mth_other', 'org_2');
    await card(store, 'mth_echeck', 'org_1', {}, 'echeck');
    store.records.get('mth_sup')!.paymethod.card!.suppress_account_updater = true;
    const summary = await run(
      file(
        HEADER,
        'mth_a,new,4012888888881881,,', // 2 applied
        'mth_b,exp,,3,2031', // 3 applied
        'mth_c,cls,,,', // 4 superseded by 6
        'mth_zzz,new,,,', // 5 unknown
        'mth_c,con,,,', // 6 applied
        'mth_sup,new,4012888888881881,,', // 7 suppressed
        'mth_other,new,4012888888881881,,', // 8 other organization (scoped)
        'mth_d,new,1234,,', // 9 bad number
        'mth_d,xxx,,,', // 10 bad code
        'mth_d,exp,,1,2026', // 11 past expiry
        'mth_d,exp,,', // 12 wrong column count
        'mth_echeck,new,4012888888881881,,', // 13 not a card
        '',
      ),
      store,
      { organizationId: 'org_1', batchSize: 3 },
    );
    expect(summary.applied).toBe(3);
    expect(summary.skipped).toBe(2);
    expect(summary.error_count).toBe(7);
    expect(summary.errors.map((error) => [error.line, error.paymethod_token, error.reason.split(':')[0]])).toEqual([
      [5, 'mth_zzz', 'unknown token in org_1'],
      [8, 'mth_other', 'unknown token in org_1'],
      [9, 'mth_d', 'bad number'],
      [10, 'mth_d', 'bad code'],
      [11, 'mth_d', 'past expiry'],
      [12, 'mth_d', 'wrong column count'],
      [13, 'mth_echeck', 'not a card'],
    ]);
    expect(summary.notes).toEqual([
      { line: 4, paymethod_token: 'mth_c', reason: 'superseded by line 6' },
      { line: 7, paymethod_token: 'mth_sup', reason: 'suppressed: suppress_account_updater is true' },
    ]);
    const a = store.records.get('mth_a')!;
    expect(a.paymethod.card).toMatchObject({ last_4_account_number: '1881', masked_account_number: '****1881', au_code: 'new', au_description: 'New account number' });
    expect(await vault.open(a.secret!, { organizationId: 'org_1', recordToken: 'mth_a' })).toBe('4012888888881881');
    expect(store.records.get('mth_b')!.paymethod.card).toMatchObject({ expire_month: 3, expire_year: 2031, au_code: 'exp', au_description: 'New expiration date' });
    expect(store.records.get('mth_c')!.paymethod.card).toMatchObject({ au_code: 'con', au_description: 'Contact cardholder' });
    expect(store.records.get('mth_other')!.paymethod.card!.au_code).toBeUndefined();
    expect(store.exported()).toHaveLength(3);
    expect([...store.months]).toEqual(['2026-05#org_1']);
  });

  it("refuses a new number of another brand than the card's: the row is a bad number and the card keeps its own", async () => {
    const store = new FakeStore();
    await card(store, 'mth_visa');
    await card(store, 'mth_amex', 'org_1', { card_type: 'amex', last_4_account_number: '0005', masked_account_number: '****0005' });
    const summary = await run(file(HEADER, 'mth_visa,new,5555555555554444,,', 'mth_amex,new,4012888888881881,,', 'mth_amex,new,378734493671000,,'), store, { organizationId: 'org_1' });
    expect(summary.errors).toEqual([
      { line: 2, paymethod_token: 'mth_visa', reason: 'bad number: card_type visa does not agree with the card number: a visa number starts with 4' },
      { line: 3, paymethod_token: 'mth_amex', reason: 'bad number: card_type amex does not agree with the card number: an amex number starts with 34 or 37 and has 15 digits' },
    ]);
    expect(summary.applied).toBe(1);
    expect(store.records.get('mth_visa')!.paymethod.card).toMatchObject({ last_4_account_number: '1111' });
    expect(store.records.get('mth_visa')!.paymethod.card!.au_code).toBeUndefined();
    expect(store.records.get('mth_amex')!.paymethod.card).toMatchObject({ card_type: 'amex', last_4_account_number: '1000', au_code: 'new' });
  });

  it('resolves duplicate rows to the last line whatever order the batches run in, retries included', async () => {
    const rows = [HEADER, 'mth_a,cls,,,', 'mth_b,exp,,3,2031', 'mth_a,exp,,4,2032', 'mth_b,con,,,', 'mth_a,con,,,', 'mth_c,cls,,,', 'mth_a,new,4012888888881881,,'];
    const orders: Array<(batches: SourceRow[][]) => SourceRow[][]> = [
      (all) => all,
      (all) => [...all].reverse(),
      (all) => [all[2]!, all[0]!, all[3]!, all[1]!, all[0]!],
      (all) => [all[1]!, all[3]!, all[2]!, all[3]!, all[0]!, all[1]!],
    ];
    const outcomes = [];
    for (const order of orders) {
      const store = new FakeStore();
      for (const token of ['mth_a', 'mth_b', 'mth_c']) await card(store, token);
      const summary = await run(file(...rows), store, { batchSize: 2, order });
      outcomes.push({ summary, cards: [...store.records.values()].map((stored) => stored.paymethod.card), exported: store.exported() });
    }
    expect(outcomes[0]!.summary).toEqual({
      applied: 3,
      skipped: 4,
      errors: [],
      error_count: 0,
      notes: [
        { line: 2, paymethod_token: 'mth_a', reason: 'superseded by line 8' },
        { line: 3, paymethod_token: 'mth_b', reason: 'superseded by line 5' },
        { line: 4, paymethod_token: 'mth_a', reason: 'superseded by line 8' },
        { line: 6, paymethod_token: 'mth_a', reason: 'superseded by line 8' },
      ],
    });
    expect(outcomes[0]!.cards[0]).toMatchObject({ au_code: 'new', last_4_account_number: '1881', expire_month: 12 });
    for (const outcome of outcomes.slice(1)) expect(outcome).toEqual(outcomes[0]);
  });

  it('keeps the number from before the file only once a line replaces it, and compares with and restores it in any order', async () => {
    const rows = [HEADER, 'mth_a,exp,,4,2032', 'mth_a,new,4012888888881881,,', 'mth_a,exp,,5,2033', 'mth_b,exp,,4,2032', 'mth_b,new,4111111111111111,,'];
    const orders: Array<(batches: SourceRow[][]) => SourceRow[][]> = [(all) => all, (all) => [...all].reverse(), (all) => [all[1]!, all[0]!, all[2]!, all[1]!], (all) => [all[2]!, all[0]!, all[1]!]];
    for (const order of orders) {
      const store = new FakeStore();
      for (const token of ['mth_a', 'mth_b']) await card(store, token);
      const summary = await run(file(...rows), store, { batchSize: 2, order });
      expect(summary).toMatchObject({ applied: 2, error_count: 0 });
      // mth_a: the last line keeps the number from before the file (its earlier line's new number is undone).
      const a = store.records.get('mth_a')!;
      expect(a.paymethod.card).toMatchObject({ last_4_account_number: '1111', expire_month: 5, expire_year: 2033, au_code: 'exp' });
      expect(await vault.open(a.secret!, { organizationId: 'org_1', recordToken: 'mth_a' })).toBe('4111111111111111');
      // mth_b: the same number as stored, after a line that kept it, compared with the card's own: no new number.
      const b = store.records.get('mth_b')!;
      expect(b.paymethod.card).toMatchObject({ last_4_account_number: '1111', expire_month: 12, expire_year: 2030, au_code: 'new' });
      expect(b.source?.before.secret).toBeUndefined();
    }
    // A line that undoes an earlier line's new number gives the card back its fingerprint from before the file,
    // or none for a card not yet fingerprinted: never the one of the number undone.
    for (const fingerprint of ['fp_before_the_file', undefined]) {
      const undone = new FakeStore();
      await card(undone, 'mth_f', 'org_1', fingerprint ? { fingerprint } : {});
      await run(file(HEADER, 'mth_f,new,4012888888881881,,', 'mth_f,exp,,5,2033'), undone, { batchSize: 1 });
      const restored = undone.records.get('mth_f')!;
      expect(restored.source?.applied_lines).toEqual([2, 3]);
      expect(restored.paymethod.card).toMatchObject({ last_4_account_number: '1111', expire_month: 5 });
      expect(restored.paymethod.card!.fingerprint).toBe(fingerprint);
    }
    // A row that keeps the number writes no copy of it.
    const store = new FakeStore();
    await card(store, 'mth_c');
    await run(file(HEADER, 'mth_c,exp,,4,2032'), store);
    expect(store.records.get('mth_c')!.source?.before).toEqual({ card: { last_4_account_number: '1111', masked_account_number: '****1111', expire_month: 12, expire_year: 2030 } });
  });

  it('counts only the last line as applied when a batch failed after replacing an earlier line and ran again after a later one', async () => {
    const rows = [HEADER, 'mth_a,cls,,,', 'mth_b,exp,,3,2031', 'mth_a,exp,,4,2032', 'mth_b,con,,,', 'mth_a,con,,,', 'mth_c,cls,,,', 'mth_a,new,4012888888881881,,'];
    const store = new FakeStore();
    for (const token of ['mth_a', 'mth_b', 'mth_c']) await card(store, token);
    // Batch 1 (line 4 replaces line 2) loses its result, batches 2 and 3 follow (line 8 wins), then batch 1 runs again.
    const summary = await run(file(...rows), store, { batchSize: 2, order: (all) => [all[0]!, all[1]!, all[2]!, all[3]!, all[1]!], loseFirstResultOf: [1] });
    expect(summary).toMatchObject({ applied: 3, skipped: 4, error_count: 0 });
    expect(summary.notes.map((note) => note.line)).toEqual([2, 3, 4, 6]);
  });

  it('counts a line its failed batch applied, and a later line then replaced, once: as not applied', async () => {
    const store = new FakeStore();
    for (const token of ['mth_a', 'mth_b', 'mth_c']) await card(store, token);
    // Batch 1 (the header and line 2) commits, then fails for good; line 5, in batch 3, replaces line 2.
    const summary = await run(file(HEADER, 'mth_a,cls,,,', 'mth_b,cls,,,', 'mth_c,cls,,,', 'mth_a,con,,,'), store, { batchSize: 2, loseFirstResultOf: [0] });
    expect(summary).toMatchObject({ applied: 3, skipped: 0, error_count: 1, notes: [] });
    expect(summary.errors.map((error) => error.line)).toEqual([2]);
  });

  it('records a failed run in its summary, and reports every line no batch completed as not applied because the run failed', async () => {
    const store = new FakeStore();
    for (const token of ['mth_a', 'mth_b', 'mth_c', 'mth_d']) await card(store, token);
    // Batches 1 (the header, line 2) and 2 (lines 3, 4) apply; batch 3 (lines 5, 6) fails for good; the map then fails,
    // and batch 4 (line 7, a later line for mth_a) never starts.
    const failure = { error: 'States.ExceedToleratedFailureThreshold', cause: 'The specified tolerated failure threshold was exceeded' };
    const updates = file(HEADER, 'mth_a,cls,,,', 'mth_b,cls,,,', 'mth_nope,cls,,,', 'mth_c,cls,,,', 'mth_d,cls,,,', 'mth_a,con,,,');
    const summary = await run(updates, store, { batchSize: 2, neverApplied: [2, 3], failure });
    const notApplied = (line: number) => ({ line, paymethod_token: '', reason: 'not applied: the run failed before its batch completed; apply the file again' });
    expect(summary).toEqual({
      failure,
      applied: 2,
      skipped: 0,
      errors: [{ line: 4, paymethod_token: 'mth_nope', reason: 'unknown token' }, notApplied(5), notApplied(6), notApplied(7)],
      error_count: 4,
      notes: [],
    });
    expect(Object.keys(summary)[0]).toBe('failure'); // first, where a reader of the JSON sees it
    expect(['mth_a', 'mth_b', 'mth_c', 'mth_d'].map((token) => store.records.get(token)!.paymethod.card!.au_code)).toEqual(['cls', 'cls', undefined, undefined]);
  });

  it('changes nothing when the same file is applied again, duplicates included', async () => {
    const store = new FakeStore();
    await card(store, 'mth_a');
    await card(store, 'mth_b');
    const updates = file(HEADER, 'mth_a,new,4012888888881881,1,2032', 'mth_b,cls,,,', 'mth_b,new,4111111111111111,,');
    const first = await run(updates, store, { batchSize: 2 });
    // mth_b: same number as stored (opened and compared), new code: applied once.
    expect(first).toMatchObject({ applied: 2, skipped: 1, errors: [] });
    const before = structuredClone([...store.records.values()].map((stored) => [stored.paymethod, stored.source]));
    const second = await run(updates, store, { batchSize: 2, order: (all) => [...all].reverse(), at: '2026-05-16T12:00:00.000Z' });
    expect(second).toEqual({ applied: 0, skipped: 3, errors: [], error_count: 0, notes: [{ line: 3, paymethod_token: 'mth_b', reason: 'superseded by line 4' }] });
    expect([...store.records.values()].map((stored) => [stored.paymethod, stored.source])).toEqual(before);
    expect(store.exported()).toHaveLength(2);
  });

  it('puts back, when the file is applied again, a history item its first run failed to write, and no other', async () => {
    const store = new FakeStore();
    for (const token of ['mth_a', 'mth_b', 'mth_c']) await card(store, token);
    const updates = file(HEADER, 'mth_a,exp,,4,2032', 'mth_b,cls,,,', 'mth_c,new,4012888888881881,,');
    await run(updates, store);
    const written = structuredClone([...store.history.entries()]);
    // The first run's last attempt died between mth_b's card and its history item.
    const lost = [...store.history.keys()].find((key) => key.includes('mth_b'))!;
    store.history.delete(lost);
    // An API update since (an expiry) is not written into the items still there.
    store.records.get('mth_a')!.paymethod.card!.expire_month = 9;
    const again = await run(updates, store, { at: '2026-05-20T08:00:00.000Z' });
    expect(again).toMatchObject({ applied: 0, skipped: 3, error_count: 0 });
    expect([...store.history.entries()].sort()).toEqual(written.sort());
  });

  it('reports a card whose sealed number cannot be opened as its row\'s error; the rest of the batch applies, in every run', async () => {
    const store = new FakeStore();
    for (const token of ['mth_a', 'mth_b', 'mth_c']) await card(store, token);
    // mth_b's sealed number is bound to another record (as if its bytes were damaged).
    store.records.get('mth_b')!.secret = await vault.seal('4111111111111111', { organizationId: 'org_1', recordToken: 'mth_elsewhere' });
    const updates = file(HEADER, 'mth_a,new,4111111111111111,5,2033', 'mth_b,new,4111111111111111,,', 'mth_c,cls,,,');
    for (const at of ['2026-05-15T12:00:00.000Z', '2026-05-16T12:00:00.000Z']) {
      const summary = await run(updates, store, { at });
      expect(summary.errors).toEqual([{ line: 3, paymethod_token: 'mth_b', reason: 'the stored number cannot be opened to compare with the new one; nothing was changed' }]);
    }
    expect(store.records.get('mth_a')!.paymethod.card).toMatchObject({ expire_month: 5, expire_year: 2033 });
    expect(store.records.get('mth_b')!.paymethod.card!.au_code).toBeUndefined();
    expect(store.records.get('mth_c')!.paymethod.card!.au_code).toBe('cls');
  });

  it('lets a later line of the file build on an API update made after an earlier line, not undo it', async () => {
    const store = new FakeStore();
    await card(store, 'mth_a');
    const context: RunContext = { file_id: 'file_api', run_id: 'run_api', applied_at: '2026-05-15T12:00:00.000Z', first_applied_at: '2026-05-15T12:00:00.000Z' };
    const deps = { cards: store, log: store, vault, fingerprinter, concurrency: 4 };
    await applyBatch([{ line: 2, fields: ['mth_a', 'exp', '', '1', '2031'] }], context, deps);
    // The merchant changes the expiry through the API (which keeps the Account Updater's source line).
    const stored = store.records.get('mth_a')!;
    stored.paymethod = { ...stored.paymethod, card: { ...stored.paymethod.card!, expire_month: 9, expire_year: 2033 }, updated_at: '2026-05-15T12:05:00.000Z', version: stored.paymethod.version + 1 };
    const later = await applyBatch([{ line: 3, fields: ['mth_a', 'con', '', '', ''] }], context, deps);
    expect(later).toMatchObject({ applied: 1, errors: [] });
    expect(store.records.get('mth_a')!.paymethod.card).toMatchObject({ au_code: 'con', expire_month: 9, expire_year: 2033 });
    // Without an update in between, a later line still starts from the card as it was before the file.
    const plain = new FakeStore();
    await card(plain, 'mth_a');
    await applyBatch([{ line: 2, fields: ['mth_a', 'exp', '', '1', '2031'] }], context, { ...deps, cards: plain, log: plain });
    await applyBatch([{ line: 3, fields: ['mth_a', 'con', '', '', ''] }], context, { ...deps, cards: plain, log: plain });
    expect(plain.records.get('mth_a')!.paymethod.card).toMatchObject({ au_code: 'con', expire_month: 12, expire_year: 2030 });
  });

  it("never moves a card's updated_at back: a card updated during the run gets 1 ms after that update, and a later line still starts from before the file", async () => {
    const store = new FakeStore();
    await card(store, 'mth_a');
    const context: RunContext = { file_id: 'file_during', run_id: 'run_during', applied_at: '2026-05-15T12:00:00.000Z', first_applied_at: '2026-05-15T12:00:00.000Z' };
    const deps = { cards: store, log: store, vault, fingerprinter, concurrency: 4 };
    // The merchant relabels the card after the run started, before its line commits.
    const stored = store.records.get('mth_a')!;
    stored.paymethod = { ...stored.paymethod, label: 'mine', updated_at: '2026-05-15T12:03:00.000Z', version: stored.paymethod.version + 1 };
    await applyBatch([{ line: 2, fields: ['mth_a', 'exp', '', '1', '2031'] }], context, deps);
    expect(store.records.get('mth_a')!.paymethod).toMatchObject({ updated_at: '2026-05-15T12:03:00.001Z', card: { au_updated_date: '2026-05-15T12:00:00.000Z' } });
    // A later line of the file saw no update since the earlier one: it starts from the card as it was before the file.
    await applyBatch([{ line: 3, fields: ['mth_a', 'con', '', '', ''] }], context, deps);
    expect(store.records.get('mth_a')!.paymethod).toMatchObject({ updated_at: '2026-05-15T12:03:00.002Z', card: { au_code: 'con', expire_month: 12, expire_year: 2030 } });
    expect(recordUpdatedAt('2026-05-15T12:00:00.000Z', '2026-05-01T00:00:00.000Z')).toBe('2026-05-15T12:00:00.000Z');
  });

  it('leaves a card a newer file changed when an older file is applied again, and still applies that file elsewhere', async () => {
    const store = new FakeStore();
    for (const token of ['mth_a', 'mth_b']) await card(store, token);
    const older = file(HEADER, 'mth_a,exp,,1,2031', 'mth_b,exp,,1,2031');
    const newer = file(HEADER, 'mth_a,exp,,6,2032');
    expect(await run(older, store, { at: '2026-05-15T12:00:00.000Z' })).toMatchObject({ applied: 2 });
    expect(await run(newer, store, { at: '2026-06-15T12:00:00.000Z' })).toMatchObject({ applied: 1 });
    // mth_b was last changed by the older file itself: nothing left to change. mth_a keeps the newer file's expiry.
    const again = await run(older, store, { at: '2026-06-20T12:00:00.000Z' });
    expect(again).toMatchObject({ applied: 0, skipped: 2, error_count: 0, notes: [{ line: 2, paymethod_token: 'mth_a', reason: 'superseded by a later file' }] });
    expect(store.records.get('mth_a')!.paymethod.card).toMatchObject({ expire_month: 6, expire_year: 2032, au_updated_date: '2026-06-15T12:00:00.000Z' });
    // A file never applied before is applied over an earlier file's changes, as always.
    const fresh = await run(file(HEADER, 'mth_a,exp,,7,2033'), store, { at: '2026-06-21T12:00:00.000Z' });
    expect(fresh).toMatchObject({ applied: 1 });
  });

  it('reads the card again after a lost race and decides again', async () => {
    const store = new FakeStore();
    await card(store, 'mth_a');
    store.conflictsLeft = 1;
    expect(await run(file(HEADER, 'mth_a,exp,,4,2033'), store)).toMatchObject({ applied: 1, errors: [] });
    store.conflictsLeft = 5;
    const lost = await run(file(HEADER, 'mth_a,exp,,5,2033'), store);
    expect(lost.errors).toEqual([{ line: 2, paymethod_token: 'mth_a', reason: 'the card changed while the file was being applied; apply the file again' }]);
  });

  it('lets the highest duplicate line win however many lower lines of the file commit before it', async () => {
    const store = new FakeStore();
    await card(store, 'mth_a');
    // Line 8's batch; lines 2 to 6 of the same card are in other batches of the run, and each commits between
    // line 8's read and its write: more races than attempts, each the file's own progress.
    store.linesAhead = [2, 3, 4, 5, 6];
    const context: RunContext = { file_id: 'file_dup', run_id: 'run_dup', applied_at: '2026-05-15T12:00:00.000Z', first_applied_at: '2026-05-15T12:00:00.000Z' };
    const result = await applyBatch([{ line: 8, fields: ['mth_a', 'exp', '', '9', '2033'] }], context, { cards: store, log: store, vault, fingerprinter, concurrency: 4 });
    expect(result).toMatchObject({ applied: 1, errors: [] });
    expect(store.linesAhead).toEqual([]);
    expect(store.records.get('mth_a')).toMatchObject({ paymethod: { card: { expire_month: 9, expire_year: 2033 } }, source: { line: 8, applied_lines: [6, 8] } });
    // A change from outside still uses an attempt up each time.
    store.conflictsLeft = 3;
    const outside = await applyBatch([{ line: 9, fields: ['mth_a', 'exp', '', '10', '2033'] }], context, { cards: store, log: store, vault, fingerprinter, concurrency: 4 });
    expect(outside.errors.map((error) => error.reason)).toEqual(['the card changed while the file was being applied; apply the file again']);
  });

  it('writes history in groups while rows still commit; a failed write stops the batch only once nothing it sent is in flight', async () => {
    const events: string[] = [];
    let writesInFlight = 0;
    class Recording extends FakeStore {
      failOnWrite?: number;
      writes = 0;
      override async applyAccountUpdates(changes: readonly CardChange[]) {
        this.writes += 1;
        if (this.writes === this.failOnWrite) throw new Error('DynamoDB is down');
        writesInFlight += 1;
        await sleep(1);
        writesInFlight -= 1;
        events.push('card');
        return super.applyAccountUpdates(changes);
      }
      override async record(updates: ReadonlyArray<{ line: number; update: AccountUpdateRecord }>) {
        writesInFlight += 1;
        await sleep(5);
        writesInFlight -= 1;
        events.push(`history ${updates.length}`);
        return super.record(updates);
      }
    }
    const store = new Recording();
    const tokens = Array.from({ length: 120 }, (_, index) => `mth_g${String(index).padStart(3, '0')}`);
    for (const token of tokens) await card(store, token);
    const rows = (code: string) => tokens.map((token, index) => ({ line: index + 2, fields: [token, code, '', '', ''] }));
    const context = (id: string): RunContext => ({ file_id: id, run_id: id, applied_at: '2026-05-15T12:00:00.000Z', first_applied_at: '2026-05-15T12:00:00.000Z' });

    const clean = await applyBatch(rows('cls'), context('run_clean'), { cards: store, log: store, vault, fingerprinter, concurrency: 4 });
    expect(clean).toMatchObject({ applied: 120, errors: [] });
    // Groups of at most 25, the first sent before the last card was written.
    const groups = events.filter((event) => event.startsWith('history')).map((event) => Number(event.split(' ')[1]));
    expect(groups.every((size) => size <= 25)).toBe(true);
    expect(groups.reduce((sum, size) => sum + size, 0)).toBe(120);
    expect(events.indexOf('history 25')).toBeLessThan(events.lastIndexOf('card'));

    store.writes = 0;
    store.failOnWrite = 60;
    store.history.clear();
    await expect(applyBatch(rows('con'), context('run_failed'), { cards: store, log: store, vault, fingerprinter, concurrency: 4 })).rejects.toThrow('DynamoDB is down');
    expect(writesInFlight).toBe(0);
    // Every card the failed batch changed has its history item; no other card was touched.
    const changed = [...store.records.values()].filter((stored) => stored.source?.run_id === 'run_failed');
    expect(changed.length).toBeGreaterThanOrEqual(55);
    expect(changed.length).toBeLessThan(120);
    expect([...store.history.values()].map((update) => update.paymethod_token).sort()).toEqual(changed.map((stored) => stored.paymethod.paymethod_token).sort());
  });

  it('commits new numbers together while other rows go on, and settles each of them on its own', async () => {
    const calls: string[][] = [];
    class Recording extends FakeStore {
      override async applyAccountUpdates(changes: readonly CardChange[]) {
        calls.push(changes.map((change) => `${change.card.au_code}:${change.current.paymethod_token}`));
        return super.applyAccountUpdates(changes);
      }
    }
    const store = new Recording();
    const tokens = Array.from({ length: 60 }, (_, index) => `mth_n${String(index).padStart(3, '0')}`);
    for (const token of tokens) await card(store, token);
    // Rows 2..41 bring new numbers, 42..61 new expiries; the last line names the first card again.
    const lines = tokens.map((token, index) => (index < 40 ? `${token},new,${index % 2 ? '4012888888881881' : '4242424242424242'},,` : `${token},exp,,6,2033`));
    store.conflictsLeft = 1;
    const summary = await run(file(HEADER, ...lines, `${tokens[0]},exp,,7,2034`), store);
    // 61 rows: line 2 counts as skipped, superseded by line 62.
    expect(summary).toMatchObject({ applied: 60, skipped: 1, error_count: 0 });
    const newNumberCalls = calls.filter((call) => call[0]!.startsWith('new:'));
    // Groups of NEW_NUMBER_GROUP (the first lost one card to the conflict, read again and sent with the last ones).
    expect(newNumberCalls.map((call) => call.length)).toEqual([16, 16, 9]);
    expect(calls.every((call) => call.length === 1 || call.every((entry) => entry.startsWith('new:')))).toBe(true);
    // A row with a new number commits after expiry rows read later: the batch did not wait for it.
    expect(calls.findIndex((call) => call[0] === 'exp:mth_n040')).toBeLessThan(calls.indexOf(newNumberCalls[2]!));
    // The last line wins over the first card's new number, whichever committed first: only its change shows.
    expect(store.records.get(tokens[0]!)!.paymethod.card).toMatchObject({ au_code: 'exp', expire_month: 7, expire_year: 2034, last_4_account_number: '1111' });
    expect(store.records.get(tokens[1]!)!.paymethod.card).toMatchObject({ au_code: 'new', last_4_account_number: '1881' });
  });

  it('lists the first 1,000 errors, counts all, writes all beside the summary, and reports lines no batch covered', async () => {
    const store = new FakeStore();
    const lines = [HEADER, ...Array.from({ length: 1_205 }, (_unused, index) => `mth_missing${index},cls,,,`)];
    const summary = await run(file(...lines), store, { batchSize: 100, order: (all) => all.filter((_batch, index) => index !== 3) });
    expect(summary.error_count).toBe(1_205);
    expect(summary.errors).toHaveLength(1_000);
    expect(summary.errors[0]).toEqual({ line: 2, paymethod_token: 'mth_missing0', reason: 'unknown token' });
    expect(summary.errors[300]).toEqual({ line: 302, paymethod_token: '', reason: 'not applied: its batch failed after its retries; apply the file again' });
    const csv = written.get(summary.errors_key!)!.split('\r\n');
    expect(csv[0]).toBe('line,paymethod_token,reason');
    expect(csv).toHaveLength(1_205 + 2);
    expect(csv[1_205]).toBe('1206,mth_missing1204,unknown token');
  });

  it('quotes a token cell only when it is a well-formed token: no card number, no formula reaches the summary or the errors file', async () => {
    const store = new FakeStore();
    const hostile = [
      '4111111111111111,new,,,',
      '"4111 1111 1111 1111",cls,,,',
      '4111.1111.1111.1111,new,,,',
      '"=HYPERLINK(""http://x.example/"",""a"")",cls,,,',
      '@SUM(A1),cls,,,',
      'mth_a-4111-1111-1111-1111,cls,,,',
      'mth_4111111111111111,cls,,,',
      'mth_nope,cls,,,',
    ];
    const lines = [HEADER, ...hostile, ...Array.from({ length: 1_000 }, (_unused, index) => `mth_missing${index},cls,,,`)];
    const summary = await run(file(...lines), store);
    expect(summary.errors.slice(0, 8).map((error) => error.paymethod_token)).toEqual(['', '', '', '', '', '', '', 'mth_nope']);
    const csv = written.get(summary.errors_key!)!;
    expect(csv).not.toMatch(/4111/);
    expect(csv.split('\r\n').slice(1, 9)).toEqual([2, 3, 4, 5, 6, 7, 8].map((line) => `${line},,unknown token`).concat('9,mth_nope,unknown token'));
  });

  it('copies a card number written in any spelling in any cell into no summary, errors file or batch result', async () => {
    const fullWidth = (digit: string) => String.fromCharCode(0xff10 + Number(digit));
    // A Luhn-valid number of 12 to 19 digits, written in groups with one kind of separator, some digits full-width.
    const spelledNumber = fc
      .record({
        body: fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 11, maxLength: 18 }),
        group: fc.integer({ min: 1, max: 6 }),
        separator: fc.constantFrom('', ' ', '  ', '.', '/', '_', '-', '\u00a0', '\u2007', '\u3000', '\t'),
        wide: fc.array(fc.boolean(), { minLength: 19, maxLength: 19 }),
        prefix: fc.constantFrom('', 'mth_', 'MTH_', 'mth_a-', ' ', '='),
      })
      .map(({ body, group, separator, wide, prefix }) => {
        const digits = withLuhnDigit(body.join(''));
        const groups = digits.match(new RegExp(`.{1,${group}}`, 'g'))!;
        let position = 0;
        const written = groups.join(separator).replace(/[0-9]/g, (digit) => (wide[position++] ? fullWidth(digit) : digit));
        return { digits, cell: `${prefix}${written}` };
      });
    const quoted = (cell: string) => `"${cell.replaceAll('"', '""')}"`;
    const filler = Array.from({ length: 1_000 }, (_unused, index) => `mth_missing${index},cls,,,`);
    await fc.assert(
      fc.asyncProperty(spelledNumber, spelledNumber, fc.constantFrom('new', 'exp', 'x'), async (token, number, code) => {
        const store = new FakeStore();
        await card(store, 'mth_a');
        const results = new MemoryResults();
        written.clear();
        const rows = [`${quoted(token.cell)},${code},${quoted(number.cell)},,`, `mth_a,new,${quoted(number.cell)},${quoted(token.cell)},`, `mth_a,${quoted(token.cell)},,,`];
        const summary = await run(file(HEADER, ...rows, ...filler), store, { results });
        expect(summary.errors_key).toBeDefined(); // the errors file was written too
        const outputs = [JSON.stringify(summary), ...written.values(), ...[...results.stored.values()].map((result) => JSON.stringify(result))];
        for (const output of outputs) {
          expect(holdsNumber(output, token.digits), token.cell).toBe(false);
          expect(holdsNumber(output, number.digits), number.cell).toBe(false);
        }
      }),
      { numRuns: 60 },
    );
  }, 120_000);

  it('reads a file whose lines end with CRLF and LF mixed, each line a row, a quoted newline kept in its field', async () => {
    const store = new FakeStore();
    for (const token of ['mth_a', 'mth_b', 'mth_c', 'mth_d']) await card(store, token);
    const text = `${HEADER}\r\nmth_a,cls,,,\nmth_b,con,,,\r\n"mth_c\r\n",cls,,,\nmth_d,exp,,4,2033\n`;
    const source: UpdateFileSource = () => (async function* () { yield Buffer.from(text); })();
    const rows: SourceRow[] = [];
    for await (const row of readUpdateFile(source())) rows.push(row);
    expect(rows.map((row) => [row.line, row.fields.length])).toEqual([[1, 5], [2, 5], [3, 5], [4, 5], [5, 5]]);
    const summary = await run(source, store);
    expect(summary).toMatchObject({ applied: 4, error_count: 0 });
  });

  it('refuses an empty file, a wrong header, non-UTF-8 and broken quoting as a whole, before writing anything', async () => {
    for (const [source, code] of [
      [file(''), 'EMPTY_FILE'],
      [file('\uFEFF', ''), 'EMPTY_FILE'],
      [file('paymethod_token,au_code,account_number,expire_month', 'mth_a,new,,'), 'BAD_HEADER'],
      [file('token,code,number,month,year', 'mth_a,exp,,4,2033'), 'BAD_HEADER'],
      [() => (async function* () { yield Buffer.from(`${HEADER}\nmth_a,exp,,4,2033\n\xff`, 'latin1'); })(), 'BAD_ENCODING'],
      [file(HEADER, 'mth_a,"exp"x,,4,2033', 'mth_b,cls,,,'), 'MALFORMED_CSV'],
    ] as const) {
      const error = await checkUpdateFile(source).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InvalidRequest);
      expect((error as InvalidRequest).code).toBe(code);
    }
    expect(await run(file(HEADER, ''), new FakeStore())).toEqual({ applied: 0, skipped: 0, errors: [], error_count: 0, notes: [] });
  });

  it('cuts a file into ranges of whole records that, read alone, give the rows of the whole file with their line numbers', async () => {
    // Cells with quoted newlines and quotes, multi-byte characters; CRLF and LF mixed; blank lines; a BOM or not.
    const cell = fc.oneof(fc.constantFrom('', 'mth_a', 'new', '4111111111111111', '"q""uoted"', '"line\r\nbreak"', '"a\nb"', 'é€😀', '\ufeffx'), fc.string({ maxLength: 6 }).map((text) => text.replace(/["\r\n,]/g, '')));
    const row = fc.array(cell, { minLength: 1, maxLength: 6 }).map((cells) => cells.join(','));
    const text = fc.record({ bom: fc.boolean(), rows: fc.array(fc.tuple(row, fc.constantFrom('\n', '\r\n', '\n\n', '\r\n\r\n')), { maxLength: 60 }), trailing: fc.boolean() }).map(
      ({ bom, rows, trailing }) => `${bom ? '\ufeff' : ''}${HEADER}\r\n${rows.map(([line, ending], index) => (index === rows.length - 1 && !trailing ? line : line + ending)).join('')}`,
    );
    await fc.assert(
      fc.asyncProperty(text, fc.integer({ min: 1, max: 7 }), async (content, chunkSize) => {
        const bytes = Buffer.from(content, 'utf8');
        const source: UpdateFileSource = () => (async function* () { for (let at = 0; at < bytes.length; at += chunkSize) yield bytes.subarray(at, at + chunkSize); })();
        const whole: SourceRow[] = [];
        for await (const parsed of readUpdateFile(source())) whole.push(parsed);
        const { ranges, records } = await checkUpdateFile(source);
        expect(records).toBe(whole.length);
        expect(ranges[0]).toMatchObject({ start: 0, first_line: 1 });
        expect(ranges.at(-1)!.last_line).toBe(records);
        const ranged: SourceRow[] = [];
        for (const [index, range] of ranges.entries()) {
          if (index > 0) expect(range).toMatchObject({ start: ranges[index - 1]!.end, first_line: ranges[index - 1]!.last_line + 1 });
          for await (const parsed of readUpdateRange(once(bytes.subarray(range.start, range.end)), range)) ranged.push(parsed);
        }
        expect(ranged).toEqual(whole);
      }),
      { numRuns: 200 },
    );
  });

  it('cuts ranges of at most BATCH_ROWS lines and about MAX_BATCH_BYTES bytes, and refuses a range that is not one it cut', async () => {
    const short = Array.from({ length: 2_500 }, (_unused, index) => `mth_r${index},cls,,,`);
    expect((await checkUpdateFile(file(HEADER, ...short))).ranges.map((range) => [range.first_line, range.last_line])).toEqual([[1, BATCH_ROWS], [BATCH_ROWS + 1, 2 * BATCH_ROWS], [2 * BATCH_ROWS + 1, 2_501]]);
    const long = Buffer.from([HEADER, ...Array.from({ length: 400 }, (_unused, index) => `mth_r${index},cls,,,"${'x'.repeat(8_000)}"`)].join('\n'));
    const { ranges } = await checkUpdateFile(() => once(long));
    expect(ranges.length).toBeGreaterThanOrEqual(Math.ceil((400 * 8_000) / MAX_BATCH_BYTES));
    // A range ends at the first record that takes it past the limit.
    for (const range of ranges) expect(range.end - range.start).toBeLessThanOrEqual(MAX_BATCH_BYTES + 8_100);
    const bytes = Buffer.from([HEADER, ...short].join('\r\n'));
    const [first] = (await checkUpdateFile(file(HEADER, ...short))).ranges;
    const read = async (range: typeof first) => {
      for await (const _row of readUpdateRange(once(bytes.subarray(range!.start, range!.end)), range!));
    };
    await expect(read({ ...first!, last_line: first!.last_line + 1 })).rejects.toThrow(/read as lines 1 to 1000/);
  });

  it('reads quoted fields, CRLF and a BOM, numbering records from the header', async () => {
    const rows = [];
    for await (const row of readUpdateFile(file('\uFEFF' + HEADER, '"mth_a","c""ls",,,', '', 'mth_b,exp,,1')())) rows.push(row);
    expect(rows).toEqual([
      { line: 1, fields: [...HEADER.split(',')] },
      { line: 2, fields: ['mth_a', 'c"ls', '', '', ''] },
      { line: 3, fields: ['mth_b', 'exp', '', '1'] },
    ]);
  });
});

describe('monthly export', () => {
  it('writes a CSV and a workbook per organization with a header and one row per update, oldest first', async () => {
    const written = new Map<string, string>();
    const sheets = new Map<string, { name: string; columns: readonly string[]; created: Date; rows: string[][] }>();
    const update = (org: string, token: string, date: string): AccountUpdateRecord => ({
      organization_id: org, location_id: 'loc_1', paymethod_token: token, card_type: 'visa', au_code: 'new', au_description: 'New account number', au_updated_date: date, last_4_account_number: '0444', expire_month: 1, expire_year: 2032,
      previous_last_4_account_number: '1111', previous_expire_month: 12, previous_expire_year: 2029,
    });
    const history = {
      async *organizationsWithUpdates() {
        yield* ['org_1', 'org_2', 'org_marked_only'];
      },
      async *updatesOf(org: string) {
        if (org === 'org_1') yield* [update(org, 'mth_a', '2026-05-01T00:00:00.000Z'), { ...update(org, 'mth_b', '2026-05-02T00:00:00.000Z'), customer_token: 'cst_1', customer_id: '=HYPERLINK("x")', au_code: 'con' as const, au_description: 'Contact cardholder' }];
        // A history item from before card_type, customer_id and the previous values were kept.
        if (org === 'org_2') yield { organization_id: org, paymethod_token: 'mth_c', au_code: 'exp' as const, au_description: 'New expiration date', au_updated_date: '2026-05-03T00:00:00.000Z', last_4_account_number: '4444', expire_month: 2, expire_year: 2033 };
      },
    };
    const reports = {
      async write(key: string, body: AsyncIterable<string>) {
        let text = '';
        for await (const chunk of body) text += chunk;
        written.set(key, text);
      },
    };
    const workbooks = {
      async writeWorkbook(key: string, sheet: { name: string; columns: readonly string[]; created: Date }, rows: AsyncIterable<readonly string[]>) {
        const all: string[][] = [];
        for await (const row of rows) all.push([...row]);
        sheets.set(key, { ...sheet, rows: all });
      },
    };
    expect(await exportAccountUpdates('2026-05', { history, reports, workbooks })).toEqual({
      month: '2026-05',
      keys: ['au-reports/org_1/2026-05.csv', 'au-reports/org_1/2026-05.xlsx', 'au-reports/org_2/2026-05.csv', 'au-reports/org_2/2026-05.xlsx'],
    });
    const header =
      'au_updated_date_utc,paymethod_token,location_id,customer_token,customer_id,card_type,au_code,au_description,' +
      'previous_last_4_account_number,last_4_account_number,previous_expire_month,previous_expire_year,expire_month,expire_year';
    expect(written.get('au-reports/org_1/2026-05.csv')).toBe(
      `${header}\r\n` +
        '2026-05-01T00:00:00.000Z,mth_a,loc_1,,,visa,new,New account number,1111,0444,12,2029,1,2032\r\n' +
        // A cell a spreadsheet would take for a formula starts with an apostrophe.
        `2026-05-02T00:00:00.000Z,mth_b,loc_1,cst_1,"'=HYPERLINK(""x"")",visa,con,Contact cardholder,1111,0444,12,2029,1,2032\r\n`,
    );
    expect(written.get('au-reports/org_2/2026-05.csv')).toBe(`${header}\r\n2026-05-03T00:00:00.000Z,mth_c,,,,,exp,New expiration date,,4444,,,2,2033\r\n`);
    // The workbook: the same columns, text cells as they are (a text cell is never a formula), dated by the month.
    const sheet = sheets.get('au-reports/org_1/2026-05.xlsx')!;
    expect(sheet).toMatchObject({ name: 'Account updates 2026-05', columns: header.split(','), created: new Date('2026-05-01T00:00:00.000Z') });
    expect(sheet.rows[1]).toEqual(['2026-05-02T00:00:00.000Z', 'mth_b', 'loc_1', 'cst_1', '=HYPERLINK("x")', 'visa', 'con', 'Contact cardholder', '1111', '0444', '12', '2029', '1', '2032']);
    await expect(exportAccountUpdates('2026-5', { history, reports, workbooks })).rejects.toBeInstanceOf(InvalidRequest);
  });

  it('docs/account-updater.md lists the report columns the code writes, in order', async () => {
    const { readFile } = await import('node:fs/promises');
    const guide = await readFile(new URL('../../docs/account-updater.md', import.meta.url), 'utf8');
    const table = guide.slice(guide.indexOf('## Monthly export'), guide.indexOf('"Before" is the card'));
    const documented = [...table.matchAll(/^\| (`[^|]+`) \|/gm)].flatMap((match) => [...match[1]!.matchAll(/`([a-z_0-9]+)`/g)].map((name) => name[1]));
    expect(documented).toEqual([...REPORT_COLUMNS]);
  });

  it('marks every cell a spreadsheet would read as a formula, and only those', () => {
    for (const cell of ['=1+1', '+1', '-1', '@SUM(A1)', '\t=1', '\r=1']) expect(spreadsheetSafe(cell)).toBe(`'${cell}`);
    for (const cell of ['', 'mth_1', '0123', '2026-05-01T00:00:00.000Z', 'a=b', "'quoted"]) expect(spreadsheetSafe(cell)).toBe(cell);
  });

  it('exports the month before the run, across a year end', () => {
    expect(previousMonth(new Date('2026-01-01T06:00:00Z'))).toBe('2025-12');
    expect(previousMonth(new Date('2026-03-31T23:59:59Z'))).toBe('2026-02');
  });
});
