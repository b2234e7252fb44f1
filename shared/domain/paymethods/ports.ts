import type { IdempotencyCompletion } from '../idempotency.ts';
import type { SealedSecret } from '../vault.ts';
import type { OneTimeToken, Paymethod, PaymethodType } from './model.ts';

/** A new record before the repository decides `is_default` and the version. */
export type NewPaymethod = Omit<Paymethod, 'is_default' | 'version'>;

/** What a list asks for; every member narrows the result. */
export interface PaymethodQuery {
  organizationId: string;
  locationId?: string;
  customerToken?: string;
  customerId?: string;
  paymethodType?: PaymethodType;
  /** Only paymethods with this card or echeck fingerprint. */
  fingerprint?: string;
  /** Account Updater range, `yyyy-mm-ddThh:mm:ss` (UTC), both ends inclusive. */
  auUpdatedFrom?: string;
  auUpdatedTo?: string;
}

export interface PageRequest {
  pageSize: number;
  pageIndex: number;
  /** Opaque cursor from a previous page's `links.next`; without it the page is found by skipping. */
  cursor?: string;
}

export interface Page<T> {
  items: T[];
  /** Present when more records exist: resumes right after the last item. */
  nextCursor?: string;
}

/**
 * The paymethod repository, one port per protocol (shared/store has one
 * adapter for each): a use case asks only for the protocols it runs.
 */
export interface PaymethodReads {
  get(paymethodToken: string): Promise<Paymethod | undefined>;
  /** The record's sealed account number; undefined for a vendor paymethod or an unknown token. */
  sealedNumber(paymethodToken: string): Promise<SealedSecret | undefined>;
  list(query: PaymethodQuery, page: PageRequest): Promise<Page<Paymethod>>;
}

export interface PaymethodCreates {
  /**
   * Writes the record with its sealed account number in one transaction that
   * also makes it the customer's default when it is the customer's first, and
   * consumes `consumeOneTimeToken` when given (Conflict when already used),
   * and stores `completion`'s answer (OutcomeUnknown when the write may or may not have landed).
   * With `failOnDuplicate`, Conflict DUPLICATE_PAYMETHOD when the record's duplicate scope
   * (its customer, else its location's paymethods without a customer) already holds its
   * fingerprint; the create's own transaction is conditioned on it, so of two racing creates
   * only one succeeds.
   */
  create(
    record: NewPaymethod,
    secret: SealedSecret | undefined,
    options: { consumeOneTimeToken?: string; now: Date; completion?: IdempotencyCompletion<Paymethod>; failOnDuplicate?: boolean },
  ): Promise<Paymethod>;
}

export interface PaymethodUpdates {
  /** Writes `next` over `current` (optimistic lock on its version), keeping both customers' defaults coherent. */
  update(current: Paymethod, next: Paymethod): Promise<Paymethod>;
}

export interface PaymethodDeletes {
  /** Removes the record and its ciphertext; the customer's newest remaining paymethod becomes the default. */
  delete(current: Paymethod): Promise<void>;
}

export interface OneTimeTokenRepository {
  /** Stores the token, and `completion`'s answer in the same write. */
  create(token: OneTimeToken, secret: SealedSecret, completion?: IdempotencyCompletion<OneTimeToken>): Promise<void>;
  /** The token with its sealed number, for re-sealing under a paymethod; undefined when unknown. */
  getWithSecret(token: string): Promise<{ token: OneTimeToken; secret: SealedSecret } | undefined>;
  /** The token (consumed or not, expired or not); undefined when unknown. */
  get(token: string): Promise<OneTimeToken | undefined>;
}

/** PayPal's billing agreements: turns an approved agreement token into an agreement id. */
export interface BillingAgreements {
  /** InvalidRequest when PayPal refuses the token, Unavailable when PayPal cannot be reached. */
  createAgreement(billingAgreementToken: string): Promise<string>;
}
