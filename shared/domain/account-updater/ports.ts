import type { CardDetails, Paymethod } from '../paymethods/model.ts';
import type { SealedSecret } from '../vault.ts';
import type { AuCode } from './rows.ts';

/** A paymethod as the updater needs it: the record and its sealed number. */
export interface StoredPaymethod {
  paymethod: Paymethod;
  secret?: SealedSecret;
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
}

export interface CardChange {
  current: Paymethod;
  /** The whole card sub-object after the update (au_* members set). */
  card: CardDetails;
  /** The new number, sealed for this organization and paymethod; absent when the number stays. */
  secret?: SealedSecret;
  history: AccountUpdateRecord;
}

export interface AccountUpdaterStore {
  /** Strongly consistent batch lookup; unknown tokens are absent from the map. */
  getPaymethods(tokens: readonly string[]): Promise<Map<string, StoredPaymethod>>;
  /** Records that `organizationId` has updates in `month` (yyyy-mm); idempotent. */
  markMonth(month: string, organizationId: string): Promise<void>;
  /**
   * One conditional write: the card (checked against `current.version`, and
   * still a card), its sparse AU index keys, and the history item.
   * 'conflict' when the record changed or went away since it was read.
   */
  applyCardUpdate(change: CardChange): Promise<'applied' | 'conflict'>;
}

/** What the monthly export reads; both in a stable order, without Scan. */
export interface AccountUpdateHistory {
  organizationsWithUpdates(month: string): AsyncIterable<string>;
  /** Oldest first, ties broken by paymethod token. */
  updatesOf(organizationId: string, month: string): AsyncIterable<AccountUpdateRecord>;
}

/** Where report files go (the reports bucket in AWS, s3rver locally). */
export interface ReportWriter {
  /** Streams `body` to `key`, replacing any previous object. */
  write(key: string, body: AsyncIterable<string>): Promise<void>;
}

/** Opens the update file from its start; called once per pass (the file is read twice, never held whole). */
export type UpdateFileSource = () => AsyncIterable<Uint8Array | string>;
