import type { CardDetails, Paymethod } from '../paymethods/model.ts';
import { cardBrandMismatch, isExpiryCurrentOrFuture, lastFour, masked } from '../paymethods/rules.ts';
import type { Fingerprinter } from '../paymethods/fingerprints.ts';
import type { SealedSecret, Vault } from '../vault.ts';
import { UnreadableSecret } from '../vault.ts';
import type { AccountUpdateLog, AccountUpdateRecord, BatchResult, CardChange, CardUpdates, RowNote, StoredCard, UpdateSource } from './ports.ts';
import type { SourceRow, UpdateRow } from './rows.ts';
import { AU_CODES, parseRow, pastExpiry } from './rows.ts';

/** One application of one file: fixed when the run starts, the same for every batch and every retry. */
export interface RunContext {
  /** SHA-256 of the file's bytes. */
  file_id: string;
  run_id: string;
  /** The time of application (au_updated_date of every card the run changes) and of the expiry checks. */
  applied_at: string;
  /**
   * When this file was first applied (applied_at, for its first run): a card
   * another file changed after that keeps that newer change.
   */
  first_applied_at: string;
  /** When set, the file may only update this organization's cards. */
  organization_id?: string;
}

export interface BatchDeps {
  cards: CardUpdates;
  log: AccountUpdateLog;
  vault: Vault;
  /** A new number gets its new fingerprint. */
  fingerprinter: Fingerprinter;
  /** Conditional writes in flight at once within the batch (default WRITES_IN_FLIGHT). */
  concurrency?: number;
}

const MAX_ATTEMPTS = 3;
/** Conditional writes a batch keeps in flight by default; the state machine's MaxConcurrency multiplies it. */
export const WRITES_IN_FLIGHT = 8;
/** Cards read per BatchGetItem (DynamoDB's limit). */
const LOOKUP_SIZE = 100;
/** History items sent together: one BatchWriteItem (DynamoDB's limit). */
const HISTORY_GROUP = 25;
/** History items of a re-applied file checked together: one BatchGetItem (DynamoDB's limit). */
const RESTORE_GROUP = 100;
/**
 * Rows with a new number committed together. Each such commit adds the
 * card to its new duplicate-scope entry too, a transaction of two items;
 * sixteen share one call (under its 100 items). Measured on DynamoDB Local,
 * a transaction per row ran at about 0.35x the rate of a single UpdateItem,
 * sixteen rows to a transaction at about 0.75x per row.
 */
export const NEW_NUMBER_GROUP = 16;

/** A row decided, with the write that commits it (the card as read and as it becomes). */
interface Commit {
  row: UpdateRow;
  change: CardChange;
  attempt: number;
  /** The line of this run the card held when read, if any: a conflict after another one is the file's own progress. */
  readAfterLine: number | undefined;
}

/**
 * Applies one batch of an update file's rows (the header row, line 1, is
 * skipped: the run checked the file before any batch started).
 *
 * Each applied row is one conditional write of the card (checked against the
 * version read), which also records the file line it came from. That line is
 * what makes the outcome independent of the order batches run in: a row
 * never replaces a later line of the same file, a later line always
 * replaces an earlier one (and says so, for the merge to count), and a row
 * a retried batch finds already applied by this same run counts as applied
 * again. The history items come after the cards, keyed by date, token and
 * line, so writing them twice changes nothing.
 */
export async function applyBatch(rows: readonly SourceRow[], run: RunContext, deps: BatchDeps): Promise<BatchResult> {
  const batch = new Batch(run, deps);
  const now = new Date(run.applied_at);
  const valid: UpdateRow[] = [];
  for (const source of rows) {
    if (source.line === 1) continue;
    const parsed = parseRow(source, now);
    if ('error' in parsed) batch.errors.push(parsed.error);
    else valid.push(parsed.row);
  }
  await batch.apply(valid);
  const byLine = (a: { line: number }, b: { line: number }) => a.line - b.line;
  return {
    first_line: rows[0]?.line ?? 0,
    last_line: rows.at(-1)?.line ?? 0,
    applied: batch.applied,
    skipped: batch.skipped,
    errors: batch.errors.sort(byLine),
    notes: batch.notes.sort(byLine),
    superseded: batch.superseded.sort(byLine),
  };
}

class Batch {
  applied = 0;
  skipped = 0;
  readonly errors: Array<{ line: number; paymethod_token: string; reason: string }> = [];
  readonly notes: RowNote[] = [];
  readonly superseded: RowNote[] = [];
  /** Rows with a new number waiting to be committed together. */
  private newNumbers: Commit[] = [];
  /** Committed rows whose history item is not yet sent. */
  private history: Array<{ line: number; update: AccountUpdateRecord }> = [];
  /** Rows a run of this file applied before, whose history item is written again if missing. */
  private restoring: Array<{ line: number; update: AccountUpdateRecord }> = [];
  private readonly historyWrites: Array<Promise<void>> = [];
  private readonly markedMonths = new Map<string, Promise<void>>();
  private readonly now: Date;

  constructor(
    private readonly run: RunContext,
    private readonly deps: BatchDeps,
  ) {
    this.now = new Date(run.applied_at);
  }

  /**
   * One pool of `concurrency` workers over the whole batch, so the writes in
   * flight never drain between lookups: the cards of the next LOOKUP_SIZE
   * rows are read while the current ones are applied, and a lookup's cards
   * are let go once its rows are done (a batch holds at most two lookups).
   * Rows with a new number wait for NEW_NUMBER_GROUP of them while their
   * worker goes on. History items go out in groups as their rows commit; the
   * batch ends when all of them are written.
   */
  async apply(rows: UpdateRow[]): Promise<void> {
    const lookups = new Map<number, Promise<Map<string, StoredCard>>>();
    const rowsLeft = Array.from({ length: Math.ceil(rows.length / LOOKUP_SIZE) }, (_unused, chunk) => Math.min(LOOKUP_SIZE, rows.length - chunk * LOOKUP_SIZE));
    const lookup = (chunk: number) => {
      let cards = lookups.get(chunk);
      if (!cards) {
        cards = this.deps.cards.findCards(rows.slice(chunk * LOOKUP_SIZE, (chunk + 1) * LOOKUP_SIZE).map((row) => row.paymethodToken));
        // A read ahead whose rows are never reached (the batch stopped) must not surface as an unhandled rejection.
        cards.catch(() => {});
        lookups.set(chunk, cards);
      }
      return cards;
    };
    let next = 0;
    let stopped = false;
    const worker = async () => {
      try {
        for (let index = next++; index < rows.length && !stopped; index = next++) {
          const row = rows[index]!;
          const chunk = Math.floor(index / LOOKUP_SIZE);
          if (chunk + 1 < rowsLeft.length) lookup(chunk + 1);
          const found = await lookup(chunk);
          await this.applyRow(row, found.get(row.paymethodToken));
          if ((rowsLeft[chunk]! -= 1) === 0) lookups.delete(chunk);
          if (this.history.length >= HISTORY_GROUP) this.flushHistory();
        }
      } catch (error) {
        stopped = true;
        throw error;
      }
    };
    const settled = await Promise.allSettled(Array.from({ length: Math.min(this.deps.concurrency ?? WRITES_IN_FLIGHT, rows.length) }, worker));
    // The last new numbers (fewer than a group, or read again after a conflict), unless the batch has failed.
    if (!settled.some((outcome) => outcome.status === 'rejected')) settled.push(...(await Promise.allSettled([this.commitNewNumbers(true)])));
    // Even when the batch failed: every committed row gets its history item, and the batch ends only once
    // none of its writes is still in flight, so its retry starts from a settled store.
    this.flushHistory();
    const written = await Promise.allSettled(this.historyWrites);
    const failed = [...settled, ...written].find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  }

  private flushHistory(): void {
    if (this.history.length > 0) {
      const group = this.history;
      this.history = [];
      this.historyWrites.push(this.deps.log.record(group));
    }
    this.flushRestoring();
  }

  private flushRestoring(): void {
    if (this.restoring.length === 0) return;
    const group = this.restoring;
    this.restoring = [];
    this.historyWrites.push(this.deps.log.restore(group));
  }

  private async applyRow(row: UpdateRow, found: StoredCard | undefined, attempt = 1): Promise<void> {
    const scope = this.run.organization_id;
    // In a scoped file another organization's card looks exactly like an unknown token.
    if (!found || (scope !== undefined && found.paymethod.organization_id !== scope)) {
      return this.fail(row, scope === undefined ? 'unknown token' : `unknown token in ${scope}`);
    }
    const { paymethod } = found;
    const current = paymethod.card;
    if (paymethod.paymethod_type !== 'card' || !current) return this.fail(row, `not a card: the paymethod is ${paymethod.paymethod_type === 'echeck' ? 'an echeck' : `a ${paymethod.paymethod_type}`}`);

    const previous = found.source?.file_id === this.run.file_id ? found.source : undefined;
    const sameRun = previous !== undefined && previous.run_id === this.run.run_id;
    if (previous && previous.line > row.line) {
      if (sameRun) this.noteReplaced(row.paymethodToken, previous);
      return this.skip(row, `superseded by line ${previous.line}`);
    }
    if (previous && previous.line === row.line) {
      if (!sameRun) {
        this.skipped += 1; // this file was applied before: nothing left to change
        // But the run that applied it may have failed between the card and its history item: put back a missing one.
        if (current.au_updated_date) {
          this.restoring.push(historyEntry(row, paymethod, current, current.au_updated_date, previous.before.card));
          if (this.restoring.length >= RESTORE_GROUP) this.flushRestoring();
        }
        return;
      }
      // A retried batch: this run already committed the row; count it and (re)write its history.
      this.noteReplaced(row.paymethodToken, previous);
      return this.commitCounted(row, paymethod, current, previous.before.card);
    }
    if (current.suppress_account_updater === true) return this.skip(row, 'suppressed: suppress_account_updater is true');
    // Another file changed the card after this one was first applied: this file, applied again, must not undo that.
    if (!previous && current.au_updated_date !== undefined && current.au_updated_date > this.run.first_applied_at) {
      return this.skip(row, 'superseded by a later file');
    }

    // An earlier line of this file changed the card: this later line starts again from the card as it was before
    // the file. Unless the card was updated since that line (the API moves updated_at past the one the line set):
    // the merchant's change is then the card's new starting point, and nothing before it is undone.
    const updatedSince = previous !== undefined && paymethod.updated_at !== (previous.updated_at ?? current.au_updated_date);
    const before = (updatedSince ? undefined : previous?.before) ?? {
      card: {
        last_4_account_number: current.last_4_account_number,
        masked_account_number: current.masked_account_number,
        expire_month: current.expire_month,
        expire_year: current.expire_year,
        ...(current.fingerprint ? { fingerprint: current.fingerprint } : {}),
      },
    };
    // Until a line of this file gives the card a new number, the card's own sealed number is the one from before the file.
    const numberBefore = before.secret ?? found.secret;
    const month = row.expireMonth ?? before.card.expire_month;
    const year = row.expireYear ?? before.card.expire_year;
    if ((row.expireMonth !== undefined || row.expireYear !== undefined) && !isExpiryCurrentOrFuture(month, year, this.now)) return this.fail(row, pastExpiry(month, year));
    // A network refreshes a card within its brand: a number of another brand is a wrong row, not a new card_type.
    const brandMismatch = row.accountNumber === undefined ? undefined : cardBrandMismatch(current.card_type, row.accountNumber);
    if (brandMismatch) return this.fail(row, `bad number: card_type ${current.card_type} ${brandMismatch}`);

    let numberChanged: boolean;
    try {
      numberChanged = row.accountNumber !== undefined && (await this.differsFromStored(row.accountNumber, paymethod, before.card, numberBefore));
    } catch (error) {
      // One card's damaged sealed number is that row's error: it would fail every retry of the batch, and every run.
      if (error instanceof UnreadableSecret) return this.fail(row, 'the stored number cannot be opened to compare with the new one; nothing was changed');
      throw error;
    }
    const changed = numberChanged || month !== current.expire_month || year !== current.expire_year || current.au_code !== row.code;
    // After an earlier line of this file, this later line takes over even when it changes nothing more.
    if (!changed && !previous) {
      this.skipped += 1;
      return;
    }

    const card: CardDetails = {
      ...current,
      ...before.card,
      ...(numberChanged ? { last_4_account_number: lastFour(row.accountNumber!), masked_account_number: masked(row.accountNumber!) } : {}),
      expire_month: month,
      expire_year: year,
      au_code: row.code,
      au_description: AU_CODES[row.code],
      au_updated_date: this.run.applied_at,
    };
    // A new number is a new account: its fingerprint changes with it (and the card joins that fingerprint's duplicate-scope entry).
    if (numberChanged) card.fingerprint = await this.deps.fingerprinter.fingerprint(paymethod.organization_id, { kind: 'card', accountNumber: row.accountNumber! });
    // Otherwise the number is the one from before the file, and so is its fingerprint, or its lack of one
    // (a card not yet fingerprinted): never the fingerprint of a number an earlier line gave the card.
    else if (before.card.fingerprint === undefined) delete card.fingerprint;
    const binding = { organizationId: paymethod.organization_id, recordToken: paymethod.paymethod_token };
    const secret = numberChanged ? await this.deps.vault.seal(row.accountNumber!, binding) : previous ? before.secret : undefined;
    await this.markMonth(paymethod.organization_id);
    const appliedLines = [...(sameRun ? (previous.applied_lines ?? [previous.line]) : []), row.line];
    // The number from before the file goes into the source only when this line replaces it: most rows then write no copy of it.
    const sourceBefore = numberChanged && numberBefore ? { ...before, secret: numberBefore } : before;
    const updatedAt = recordUpdatedAt(this.run.applied_at, paymethod.updated_at);
    const source: UpdateSource = { file_id: this.run.file_id, line: row.line, run_id: this.run.run_id, before: sourceBefore, applied_lines: appliedLines, updated_at: updatedAt };
    const commit: Commit = { row, change: { current: paymethod, card, ...(secret ? { secret } : {}), source, updatedAt }, attempt, readAfterLine: sameRun ? previous.line : undefined };
    if (numberChanged) {
      this.newNumbers.push(commit);
      if (this.newNumbers.length >= NEW_NUMBER_GROUP) await this.commitNewNumbers(false);
      return;
    }
    const [outcome] = await this.deps.cards.applyAccountUpdates([commit.change]);
    return this.settle(commit, outcome!);
  }

  /** Commits the new numbers waiting (`all`: and those a conflict brings back, until none is left). */
  private async commitNewNumbers(all: boolean): Promise<void> {
    do {
      const group = this.newNumbers;
      this.newNumbers = [];
      if (group.length === 0) return;
      const outcomes = await this.deps.cards.applyAccountUpdates(group.map((commit) => commit.change));
      for (const [index, commit] of group.entries()) await this.settle(commit, outcomes[index]!);
    } while (all);
  }

  private async settle(commit: Commit, outcome: 'applied' | 'conflict'): Promise<void> {
    const { row, change, attempt } = commit;
    if (outcome === 'applied') {
      this.noteReplaced(row.paymethodToken, change.source);
      return this.commitCounted(row, change.current, change.card, change.source.before.card);
    }
    // Changed (or deleted) since it was read: read it again and decide again. When what changed it was another
    // line of this run, the file made progress, and that costs no attempt: however many duplicate lines race,
    // the highest still wins (each race commits one of them). Anything else (an API update) uses one up.
    const again = (await this.deps.cards.findCards([row.paymethodToken])).get(row.paymethodToken);
    const source = again?.source;
    const byThisRun = source !== undefined && source.file_id === this.run.file_id && source.run_id === this.run.run_id && source.line !== commit.readAfterLine;
    const next = byThisRun ? attempt : attempt + 1;
    if (next > MAX_ATTEMPTS) return this.fail(row, 'the card changed while the file was being applied; apply the file again');
    return this.applyRow(row, again, next);
  }

  private async commitCounted(row: UpdateRow, paymethod: Paymethod, card: CardDetails, before: UpdateSource['before']['card']): Promise<void> {
    await this.markMonth(paymethod.organization_id);
    this.applied += 1;
    this.history.push(historyEntry(row, paymethod, card, this.run.applied_at, before));
  }

  /**
   * Compares with the stored number without keeping any hash of it: a
   * different last four settles it; only when they match is the stored number
   * opened (bound to the same organization and token) and compared.
   */
  private async differsFromStored(accountNumber: string, paymethod: Paymethod, cardBefore: UpdateSource['before']['card'], numberBefore: SealedSecret | undefined): Promise<boolean> {
    if (!numberBefore || lastFour(accountNumber) !== cardBefore.last_4_account_number) return true;
    const stored = await this.deps.vault.open(numberBefore, { organizationId: paymethod.organization_id, recordToken: paymethod.paymethod_token });
    return stored !== accountNumber;
  }

  private markMonth(organizationId: string): Promise<void> {
    let marked = this.markedMonths.get(organizationId);
    if (!marked) {
      marked = this.deps.log.markMonth(this.run.applied_at.slice(0, 7), organizationId);
      marked.catch(() => this.markedMonths.delete(organizationId));
      this.markedMonths.set(organizationId, marked);
    }
    return marked;
  }

  private fail(row: UpdateRow, reason: string): void {
    this.errors.push({ line: row.line, paymethod_token: row.paymethodToken, reason });
  }

  /** Every earlier line of this run that changed the card counts as superseded (the merge counts each line once). */
  private noteReplaced(paymethodToken: string, source: UpdateSource): void {
    for (const line of source.applied_lines ?? [source.line]) {
      if (line < source.line) this.superseded.push({ line, paymethod_token: paymethodToken, reason: `superseded by line ${source.line}` });
    }
  }

  private skip(row: UpdateRow, reason: string): void {
    this.skipped += 1;
    this.notes.push({ line: row.line, paymethod_token: row.paymethodToken, reason });
  }
}

/** A row's history item: the card's columns as the row left them, on the date it was applied. */
function historyEntry(row: UpdateRow, paymethod: Paymethod, card: CardDetails, appliedAt: string, before: UpdateSource['before']['card']): { line: number; update: AccountUpdateRecord } {
  return {
    line: row.line,
    update: {
      organization_id: paymethod.organization_id,
      ...(paymethod.location_id ? { location_id: paymethod.location_id } : {}),
      ...(paymethod.customer_token ? { customer_token: paymethod.customer_token } : {}),
      ...(paymethod.customer_id ? { customer_id: paymethod.customer_id } : {}),
      paymethod_token: paymethod.paymethod_token,
      ...(card.card_type ? { card_type: card.card_type } : {}),
      au_code: row.code,
      au_description: AU_CODES[row.code],
      au_updated_date: appliedAt,
      last_4_account_number: card.last_4_account_number,
      expire_month: card.expire_month,
      expire_year: card.expire_year,
      previous_last_4_account_number: before.last_4_account_number,
      previous_expire_month: before.expire_month,
      previous_expire_year: before.expire_year,
    },
  };
}

/**
 * The record's updated_at after an Account Updater change: the run's time of
 * application, every card of the run alike, unless the record was updated
 * after the run started (a merchant's change made during it); then 1 ms after
 * that, so a record's updated_at never goes back, and its events, dated by it,
 * stay in the order they were committed.
 */
export function recordUpdatedAt(appliedAt: string, previousUpdatedAt: string): string {
  const afterPrevious = Date.parse(previousUpdatedAt) + 1;
  return Date.parse(appliedAt) >= afterPrevious ? appliedAt : new Date(afterPrevious).toISOString();
}
