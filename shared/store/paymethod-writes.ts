/**
 * What the paymethod writes (paymethod-creates.ts, -updates.ts, -deletes.ts)
 * share: the items each keeps coherent with the record in its own
 * transaction, and how often it decides again when one of them changed
 * under it.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Conflict } from '#shared/domain/errors.ts';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import { CustomerDefaults } from './customer-defaults.ts';
import { DuplicateScopes } from './duplicate-scopes.ts';
import { PaymethodIndexes } from './paymethod-queries.ts';

/** Attempts at a write whose customer's default pointer changed between its read and its commit. */
export const MAX_WRITE_ATTEMPTS = 3;

/**
 * A paymethod write: the table, and the record's other items it keeps
 * coherent in its own transaction, each built by its owner (its customer's
 * default pointer, its duplicate-scope entry).
 */
export abstract class PaymethodWrite {
  protected readonly customers: CustomerDefaults;

  protected readonly scopes: DuplicateScopes;

  /** @param indexStandIns TABLE_INDEX_STAND_INS: the pointer reads the customer index (see PaymethodIndexes) */
  constructor(
    protected readonly client: DynamoDBDocumentClient,
    protected readonly tableName: string,
    indexStandIns?: string,
  ) {
    this.customers = new CustomerDefaults(client, tableName, new PaymethodIndexes(client, tableName, indexStandIns));
    this.scopes = new DuplicateScopes(client, tableName);
  }
}

/** The record changed or went away since it was read. */
export function lostRace(current: Paymethod): Conflict {
  return new Conflict('CONCURRENT_MODIFICATION', `paymethod ${current.paymethod_token} was modified or deleted concurrently; retry`);
}

/** Every attempt found something changed under it. */
export function modifiedConcurrently(what: 'customer' | 'paymethod'): Conflict {
  return new Conflict('CONCURRENT_MODIFICATION', `the ${what} was modified concurrently; retry`);
}
