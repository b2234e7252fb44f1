import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoCardUpdates } from '#shared/store/card-updates.ts';
import { DynamoPaymethodCreates } from '#shared/store/paymethod-creates.ts';
import { DynamoPaymethodDeletes } from '#shared/store/paymethod-deletes.ts';
import { DynamoPaymethodReads } from '#shared/store/paymethod-reads.ts';
import { DynamoPaymethodUpdates } from '#shared/store/paymethod-updates.ts';

/**
 * Every protocol of the paymethod store over one client and table, as one
 * object: a test drives one table through several of them (a create, then a
 * list, then an Account Updater write), where production wiring hands each use
 * case only its own.
 */
export function paymethodStore(client: DynamoDBDocumentClient, tableName: string, indexStandIns?: string) {
  const reads = new DynamoPaymethodReads(client, tableName, indexStandIns);
  const creates = new DynamoPaymethodCreates(client, tableName, indexStandIns);
  const updates = new DynamoPaymethodUpdates(client, tableName, indexStandIns);
  const deletes = new DynamoPaymethodDeletes(client, tableName, indexStandIns);
  const cards = new DynamoCardUpdates(client, tableName);
  return {
    get: reads.get.bind(reads),
    sealedNumber: reads.sealedNumber.bind(reads),
    list: reads.list.bind(reads),
    create: creates.create.bind(creates),
    update: updates.update.bind(updates),
    delete: deletes.delete.bind(deletes),
    findCards: cards.findCards.bind(cards),
    applyAccountUpdates: cards.applyAccountUpdates.bind(cards),
  };
}

export type PaymethodStore = ReturnType<typeof paymethodStore>;
