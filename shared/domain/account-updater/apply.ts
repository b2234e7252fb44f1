import { InvalidRequest } from '../errors.ts';
import type { CardDetails } from '../paymethods/model.ts';
import { isExpiryCurrentOrFuture, lastFour, masked } from '../paymethods/rules.ts';
import type { Fingerprinter } from '../paymethods/fingerprints.ts';
import type { Vault } from '../vault.ts';
import { CsvEncodingError, readCsv } from './csv-reader.ts';
import type { AccountUpdaterStore, StoredPaymethod, UpdateFileSource } from './ports.ts';
import type { RowError, UpdateRow } from './rows.ts';
import { AU_CODES, AU_HEADER, isHeader, parseRow, pastExpiry } from './rows.ts';

/** A row counted as skipped for a reason worth telling (rows with nothing to change are not listed). */
export interface RowNote {
  line: number;
  paymethod_token: string;
  reason: string;
}

/** Each data row is counted exactly once: applied + skipped + errors.length = rows. */
export interface ApplySummary {
  applied: number;
  skipped: number;
  errors: RowError[];
  notes: RowNote[];
}

export interface ApplyOptions {
  /** When set, the file may only update this organization's cards. */
  organizationId?: string;
}

export interface ApplyDeps {
  store: AccountUpdaterStore;
  vault: Vault;
  fingerprinter: Fingerprinter;
  /** The time of application (au_updated_date) and of the expiry checks. */
  clock: () => Date;
  /** Conditional writes in flight at once (default 32). */
  concurrency?: number;
  /** Rows per BatchGet lookup (at most 100, DynamoDB's limit). */
  batchSize?: number;
}

const MAX_ATTEMPTS = 3;
const BATCHES_IN_FLIGHT = 4;

/**
 * Applies an Account Updater file. The file is read twice, streaming, never
 * held whole: the first pass checks the header and finds, for each token, the
 * last well-formed row (duplicates: the last one wins); the second applies
 * those rows in batches, with bounded concurrency.
 *
 * Each applied row is one conditional write (the card, checked against the
 * version read, plus its history item), so a failure never leaves a row half
 * applied and a concurrent API update is never overwritten. A row whose values
 * the card already has is skipped: re-applying a file changes nothing.
 */
export async function applyAccountUpdates(open: UpdateFileSource, options: ApplyOptions, deps: ApplyDeps): Promise<ApplySummary> {
  const startedAt = deps.clock();
  const lastLineOf = await findLastRows(open, startedAt);
  const run = new ApplyRun(options, deps, lastLineOf);
  await run.applyFile(open, startedAt);
  return run.summary();
}

async function findLastRows(open: UpdateFileSource, now: Date): Promise<Map<string, number>> {
  const lastLineOf = new Map<string, number>();
  let sawHeader = false;
  for await (const record of guarded(readCsv(open()))) {
    if (!sawHeader) {
      if (!isHeader(record)) refuse('BAD_HEADER', `line ${record.line}: the header must be exactly ${AU_HEADER.join(',')}`);
      sawHeader = true;
      continue;
    }
    const parsed = parseRow(record, now);
    if ('row' in parsed) lastLineOf.set(parsed.row.paymethodToken, record.line);
  }
  if (!sawHeader) refuse('EMPTY_FILE', `the file is empty; it must start with the header ${AU_HEADER.join(',')}`);
  return lastLineOf;
}

async function* guarded<T>(records: AsyncGenerator<T>): AsyncGenerator<T> {
  try {
    yield* records;
  } catch (error) {
    if (error instanceof CsvEncodingError) refuse('BAD_ENCODING', error.message);
    throw error;
  }
}

function refuse(code: string, message: string): never {
  throw new InvalidRequest([{ field: 'file', message }], code);
}

class ApplyRun {
  private applied = 0;
  private skipped = 0;
  private readonly errors: RowError[] = [];
  private readonly notes: RowNote[] = [];
  private readonly markedMonths = new Map<string, Promise<void>>();
  private readonly writesPerBatch: number;
  private readonly batchSize: number;

  constructor(
    private readonly options: ApplyOptions,
    private readonly deps: ApplyDeps,
    private readonly lastLineOf: Map<string, number>,
  ) {
    this.writesPerBatch = Math.max(1, Math.floor((deps.concurrency ?? 32) / BATCHES_IN_FLIGHT));
    this.batchSize = Math.min(100, Math.max(1, deps.batchSize ?? 100));
  }

  summary(): ApplySummary {
    const byLine = (a: { line: number }, b: { line: number }) => a.line - b.line;
    return { applied: this.applied, skipped: this.skipped, errors: this.errors.sort(byLine), notes: this.notes.sort(byLine) };
  }

  async applyFile(open: UpdateFileSource, now: Date): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    let failure: { error: unknown } | undefined;
    const launch = (rows: UpdateRow[]) => {
      const task: Promise<void> = this.applyBatch(rows)
        .catch((error: unknown) => {
          failure ??= { error };
        })
        .finally(() => inFlight.delete(task));
      inFlight.add(task);
    };
    let batch: UpdateRow[] = [];
    let header = true;
    for await (const record of guarded(readCsv(open()))) {
      if (header) {
        header = false;
        continue;
      }
      const parsed = parseRow(record, now);
      if ('error' in parsed) {
        this.errors.push(parsed.error);
        continue;
      }
      const { row } = parsed;
      const last = this.lastLineOf.get(row.paymethodToken);
      if (last !== row.line) {
        this.skip(row, `superseded by line ${last}`);
        continue;
      }
      batch.push(row);
      if (batch.length >= this.batchSize) {
        launch(batch);
        batch = [];
        // Backpressure: the file is read no faster than rows are written.
        while (inFlight.size >= BATCHES_IN_FLIGHT) await Promise.race(inFlight);
      }
      if (failure) break;
    }
    if (batch.length > 0 && !failure) launch(batch);
    await Promise.all(inFlight);
    if (failure) throw failure.error;
  }

  private async applyBatch(rows: UpdateRow[]): Promise<void> {
    const found = await this.deps.store.getPaymethods(rows.map((row) => row.paymethodToken));
    let next = 0;
    const worker = async () => {
      for (let index = next++; index < rows.length; index = next++) {
        const row = rows[index]!;
        await this.applyRow(row, found.get(row.paymethodToken));
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.writesPerBatch, rows.length) }, worker));
  }

  private async applyRow(row: UpdateRow, found: StoredPaymethod | undefined, attempt = 1): Promise<void> {
    const scope = this.options.organizationId;
    // In a scoped file another organization's card looks exactly like an unknown token.
    if (!found || (scope !== undefined && found.paymethod.organization_id !== scope)) {
      return this.fail(row, scope === undefined ? 'unknown token' : `unknown token in ${scope}`);
    }
    const { paymethod } = found;
    const current = paymethod.card;
    if (paymethod.paymethod_type !== 'card' || !current) return this.fail(row, `not a card: the paymethod is ${paymethod.paymethod_type === 'echeck' ? 'an echeck' : `a ${paymethod.paymethod_type}`}`);
    if (current.suppress_account_updater === true) return this.skip(row, 'suppressed: suppress_account_updater is true');

    const month = row.expireMonth ?? current.expire_month;
    const year = row.expireYear ?? current.expire_year;
    const now = this.deps.clock();
    if ((row.expireMonth !== undefined || row.expireYear !== undefined) && !isExpiryCurrentOrFuture(month, year, now)) return this.fail(row, pastExpiry(month, year));

    const binding = { organizationId: paymethod.organization_id, recordToken: paymethod.paymethod_token };
    const numberChanged = row.accountNumber !== undefined && (await this.differsFromStored(row.accountNumber, found));
    const changed = numberChanged || month !== current.expire_month || year !== current.expire_year || current.au_code !== row.code;
    if (!changed) {
      this.skipped += 1;
      return;
    }

    const appliedAt = now.toISOString();
    const card: CardDetails = {
      ...current,
      ...(numberChanged ? { last_4_account_number: lastFour(row.accountNumber!), masked_account_number: masked(row.accountNumber!) } : {}),
      expire_month: month,
      expire_year: year,
      au_code: row.code,
      au_description: AU_CODES[row.code],
      au_updated_date: appliedAt,
    };
    // A new number is a new account: its fingerprint (and so its duplicate scope entry) changes with it.
    if (numberChanged) card.fingerprint = await this.deps.fingerprinter.fingerprint(paymethod.organization_id, { kind: 'card', accountNumber: row.accountNumber! });
    const secret = numberChanged ? await this.deps.vault.seal(row.accountNumber!, binding) : undefined;
    await this.markMonth(appliedAt.slice(0, 7), paymethod.organization_id);
    const outcome = await this.deps.store.applyCardUpdate({
      current: paymethod,
      card,
      ...(secret ? { secret } : {}),
      history: {
        organization_id: paymethod.organization_id,
        ...(paymethod.location_id ? { location_id: paymethod.location_id } : {}),
        ...(paymethod.customer_token ? { customer_token: paymethod.customer_token } : {}),
        paymethod_token: paymethod.paymethod_token,
        au_code: row.code,
        au_description: AU_CODES[row.code],
        au_updated_date: appliedAt,
        last_4_account_number: card.last_4_account_number,
        expire_month: month,
        expire_year: year,
      },
    });
    if (outcome === 'applied') {
      this.applied += 1;
      return;
    }
    // Changed (or deleted) since the batch read it: read it again and decide again.
    if (attempt >= MAX_ATTEMPTS) return this.fail(row, 'the card changed while the file was being applied; apply the file again');
    const again = await this.deps.store.getPaymethods([row.paymethodToken]);
    return this.applyRow(row, again.get(row.paymethodToken), attempt + 1);
  }

  /**
   * Compares with the stored number without keeping any hash of it: a
   * different last four settles it; only when they match is the stored number
   * opened (bound to the same organization and token) and compared.
   */
  private async differsFromStored(accountNumber: string, found: StoredPaymethod): Promise<boolean> {
    if (!found.secret || lastFour(accountNumber) !== found.paymethod.card?.last_4_account_number) return true;
    const stored = await this.deps.vault.open(found.secret, { organizationId: found.paymethod.organization_id, recordToken: found.paymethod.paymethod_token });
    return stored !== accountNumber;
  }

  private markMonth(month: string, organizationId: string): Promise<void> {
    const key = `${month}#${organizationId}`;
    let marked = this.markedMonths.get(key);
    if (!marked) {
      marked = this.deps.store.markMonth(month, organizationId);
      marked.catch(() => this.markedMonths.delete(key));
      this.markedMonths.set(key, marked);
    }
    return marked;
  }

  private fail(row: UpdateRow, reason: string): void {
    this.errors.push({ line: row.line, paymethod_token: row.paymethodToken, reason });
  }

  private skip(row: UpdateRow, reason: string): void {
    this.skipped += 1;
    this.notes.push({ line: row.line, paymethod_token: row.paymethodToken, reason });
  }
}
