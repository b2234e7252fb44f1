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

/** A record's other items: its customer's default pointer and its duplicate-scope entry, each from its owner. */
export interface PaymethodCompanions {
  customers: CustomerDefaults;
  scopes: DuplicateScopes;
}

/** @param indexStandIns TABLE_INDEX_STAND_INS: the pointer reads the customer index (see PaymethodIndexes) */
export function paymethodCompanions(client: DynamoDBDocumentClient, tableName: string, indexStandIns?: string): PaymethodCompanions {
  return { customers: new CustomerDefaults(client, tableName, new PaymethodIndexes(client, tableName, indexStandIns)), scopes: new DuplicateScopes(client, tableName) };
}

/** The record changed or went away since it was read. */
export function lostRace(current: Paymethod): Conflict {
  return new Conflict('CONCURRENT_MODIFICATION', `paymethod ${current.paymethod_token} was modified or deleted concurrently; retry`);
}

/** Every attempt found something changed under it. */
export function modifiedConcurrently(what: 'customer' | 'paymethod'): Conflict {
  return new Conflict('CONCURRENT_MODIFICATION', `the ${what} was modified concurrently; retry`);
}
