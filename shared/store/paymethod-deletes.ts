import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import type { PaymethodDeletes } from '#shared/domain/paymethods/ports.ts';
import { keys } from './keys.ts';
import { atVersion } from './paymethod-item.ts';
import type { PaymethodCompanions } from './paymethod-writes.ts';
import { MAX_WRITE_ATTEMPTS, lostRace, modifiedConcurrently, paymethodCompanions } from './paymethod-writes.ts';
import { transact } from './write-conflicts.ts';

/**
 * A delete, in one transaction with its customer's pointer (the newest other
 * paymethod becomes the default) and its duplicate-scope entry; the sealed
 * number goes with the item.
 */
export class DynamoPaymethodDeletes implements PaymethodDeletes {
  private readonly companions: PaymethodCompanions;

  /** @param indexStandIns TABLE_INDEX_STAND_INS (see PaymethodIndexes) */
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    indexStandIns?: string,
  ) {
    this.companions = paymethodCompanions(client, tableName, indexStandIns);
  }

  async delete(current: Paymethod): Promise<void> {
    const { customers, scopes } = this.companions;
    for (let attempt = 1; ; attempt += 1) {
      const transaction = await customers.leave(current);
      const membership = scopes.leave(current);
      if (membership) transaction.push(membership);
      const ownIndex = transaction.length;
      transaction.push({ Delete: { TableName: this.tableName, Key: keys.paymethod(current.paymethod_token), ...atVersion(current.version) } });
      const outcome = await transact(this.client, transaction);
      if (outcome === 'ok') return;
      if (outcome[ownIndex] === 'ConditionalCheckFailed') throw lostRace(current);
      if (attempt >= MAX_WRITE_ATTEMPTS) throw modifiedConcurrently('paymethod');
    }
  }
}
