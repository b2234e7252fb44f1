import type { CardDetails, Paymethod } from '../paymethods/model.ts';
import type { SealedSecret } from '../vault.ts';
import type { AuCode, RowError } from './rows.ts';

/** Which file line last changed a card, and in which run: how duplicates and retries are told apart. */
export interface UpdateSource {
  /** SHA-256 of the file's bytes: the same file applied again has the same id. */
  file_id: string;
  line: number;
  /** One execution of the engine; a retried batch keeps it, a new application of the file does not. */
  run_id: string;
  /**
   * The card as it was before this file changed it: a later line of the same
   * token starts again from here, so the card ends as if only the last line
   * had been applied, whatever order the lines ran in. `secret` is the sealed
   * number from before the file, kept only once a line of the file has given
   * the card another: while it is absent the card's own is that number, and
   * a row that keeps the number writes no second copy of it.
   */
  before: { card: Pick<CardDetails, 'last_4_account_number' | 'masked_account_number' | 'expire_month' | 'expire_year' | 'fingerprint'>; secret?: SealedSecret };
  /**
   * Every line of this run that changed the card, this one last. A batch that
   * failed after committing a line loses the notes it had made; whichever batch
   * touches the card next repeats them from here, so the summary counts only
   * the last line as applied whatever order batches ran and retried in.
   */
  applied_lines?: number[];
  /**
   * The record's updated_at this line set: a later line of the file that
   * finds another one knows the card was updated since (absent on sources
   * written before it was kept; their line set updated_at to au_updated_date).
   */
  updated_at?: string;
}

/** A card as the updater needs it: the record, its sealed number, and the line that last changed it. */
export interface StoredCard {
  paymethod: Paymethod;
  secret?: SealedSecret;
  source?: UpdateSource;
}

export interface CardChange {
  current: Paymethod;
  /** The whole card sub-object after the update (au_* members set). */
  card: CardDetails;
  /** The new number, sealed for this organization and paymethod; absent when the number stays. */
  secret?: SealedSecret;
  source: UpdateSource;
  /** The record's updated_at after the change (see recordUpdatedAt in apply.ts). */
  updatedAt: string;
}

/** The paymethod repository's Account Updater side: the only writer of cards. */
export interface CardUpdates {
  /** Strongly consistent batch lookup (up to 100 tokens); unknown tokens are absent from the map. */
  findCards(tokens: readonly string[]): Promise<Map<string, StoredCard>>;
  /**
   * Commits each change on its own: a conditional write (version as read,
   * still a card) that also sets the record's updated_at to the change's
   * `updatedAt` (so a later update through the API shows as one),
   * 'conflict' when it changed or went away. A new number's
   * commit also adds the card to its new duplicate-scope entry, a transaction; such
   * changes passed together share transactions, so they are worth sending
   * together.
   */
  applyAccountUpdates(changes: readonly CardChange[]): Promise<Array<'applied' | 'conflict'>>;
}

/** One applied update, kept for the monthly export (no number, only what the card shows). */
export interface AccountUpdateRecord {
  organization_id: string;
  location_id?: string;
  customer_token?: string;
  paymethod_token: string;
  au_code: AuCode;
  au_description: string;
  au_updated_date: string;
  last_4_account_number: string;
  expire_month: number;
  expire_year: number;
  /** Absent on history items written before they were kept. */
  card_type?: string;
  customer_id?: string;
  /** The card as it was before the file changed it (the number's last four and the expiry). */
  previous_last_4_account_number?: string;
  previous_expire_month?: number;
  previous_expire_year?: number;
}

/** The history the export reads, written after the cards (idempotently: a retry rewrites the same items). */
export interface AccountUpdateLog {
  /** Records that `organizationId` has updates in `month` (yyyy-mm); idempotent. */
  markMonth(month: string, organizationId: string): Promise<void>;
  /** Writes the history items of applied rows, keyed by date, token and source line. */
  record(updates: ReadonlyArray<{ line: number; update: AccountUpdateRecord }>): Promise<void>;
  /**
   * Writes those of these history items that are missing, and leaves the
   * others as they are: a run that failed between a card and its history
   * item is repaired by applying the file again.
   */
  restore(updates: ReadonlyArray<{ line: number; update: AccountUpdateRecord }>): Promise<void>;
}

/** Update files already applied, by file id: what lets an older file applied again lose to a newer one. */
export interface FileApplications {
  /** When `fileId` was first applied: `appliedAt` the first time (and recorded), the recorded time after. */
  firstApplied(fileId: string, appliedAt: string): Promise<string>;
  /**
   * Takes one upload (an object key and S3's sequencer for that write) for
   * `runId`: true for the first run to ask, and for that run asking again (a
   * retried step); false for any other run, which a second delivery of the
   * same upload started.
   */
  claimDelivery(objectKey: string, sequencer: string, runId: string): Promise<boolean>;
}

/** What the monthly export reads; both in a stable order, without Scan. */
export interface AccountUpdateHistory {
  organizationsWithUpdates(month: string): AsyncIterable<string>;
  /** Oldest first, ties broken by paymethod token; one record per card and date (the highest line). */
  updatesOf(organizationId: string, month: string): AsyncIterable<AccountUpdateRecord>;
}

/** Where report files go (the reports bucket in AWS, s3rver locally). */
export interface ReportWriter {
  /** Streams `body` (CSV text) to `key`, replacing any previous object. */
  write(key: string, body: AsyncIterable<string>): Promise<void>;
}

/**
 * Where the export's spreadsheets go: apart from ReportWriter because its
 * library (exceljs) weighs about 1 MB, which only the export's bundle carries.
 */
export interface WorkbookWriter {
  /** Streams a one-sheet workbook to `key` (.xlsx): a header row, then `rows`, every cell text; `created` is its document date. */
  writeWorkbook(key: string, sheet: { name: string; columns: readonly string[]; created: Date }, rows: AsyncIterable<readonly string[]>): Promise<void>;
}

/** What one batch of a run left behind, for the merge step. */
export interface BatchResult {
  first_line: number;
  last_line: number;
  applied: number;
  skipped: number;
  errors: RowError[];
  notes: RowNote[];
  /**
   * Lines this batch found applied earlier in the same run and then replaced
   * with a later line of the same token: the merge counts them as skipped.
   */
  superseded: RowNote[];
}

/** Where batch results wait for the merge (S3 under the run's prefix). */
export interface BatchResults {
  put(runId: string, result: BatchResult): Promise<void>;
  /** Every stored result of the run, in line order. */
  list(runId: string): AsyncIterable<BatchResult>;
}

/** A row counted as skipped for a reason worth telling (rows with nothing to change are not listed). */
export interface RowNote {
  line: number;
  paymethod_token: string;
  reason: string;
}
