import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import type { PaymethodDeletes } from '#shared/domain/paymethods/ports.ts';
import { keys } from './keys.ts';
import { atVersion } from './paymethod-item.ts';
import { MAX_WRITE_ATTEMPTS, lostRace, modifiedConcurrently, PaymethodWrite } from './paymethod-writes.ts';
import { transact } from './write-conflicts.ts';

/**
 * A delete, in one transaction with its customer's pointer (the newest other
 * paymethod becomes the default) and its duplicate-scope entry; the sealed
 * number goes with the item.
 */
export class DynamoPaymethodDeletes extends PaymethodWrite implements PaymethodDeletes {
  async delete(current: Paymethod): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      const transaction = await this.customers.leave(current);
      const membership = this.scopes.leave(current);
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
