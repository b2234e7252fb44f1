import { Conflict } from '#shared/domain/errors.ts';
import type { IdempotencyCompletion } from '#shared/domain/idempotency.ts';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import type { NewPaymethod, PaymethodCreates } from '#shared/domain/paymethods/ports.ts';
import type { SealedSecret } from '#shared/domain/vault.ts';
import { idempotencyCompletionWrite, idempotencyKeyLost } from './idempotency.ts';
import { oneTimeTokenConsumption } from './one-time-tokens.ts';
import { paymethodItem } from './paymethod-item.ts';
import { MAX_WRITE_ATTEMPTS, modifiedConcurrently, PaymethodWrite } from './paymethod-writes.ts';
import type { TransactItem } from './write-conflicts.ts';
import { transact } from './write-conflicts.ts';

/**
 * Times a flagged create may find only former holders in its way and go
 * again without spending an attempt: each time, they were taken out, or one
 * of them changed while the check read it.
 */
const MAX_FORMER_HOLDER_RELEASES = 5;

function duplicatePaymethod(record: Paymethod, existing: string): Conflict {
  const field = `${record.card ? 'card' : 'echeck'}.account_number`;
  return new Conflict('DUPLICATE_PAYMETHOD', `duplicate of paymethod ${existing}`, [{ field, message: `is already on file as paymethod ${existing}` }]);
}

/**
 * A new paymethod in one transaction with everything it changes, each item
 * built by its owner: the customer's default pointer, its duplicate-scope
 * entry (the atomic duplicate check), the one-time token it consumes and the
 * Idempotency-Key's answer.
 */
export class DynamoPaymethodCreates extends PaymethodWrite implements PaymethodCreates {
  async create(
    record: NewPaymethod,
    secret: SealedSecret | undefined,
    options: { consumeOneTimeToken?: string; now: Date; completion?: IdempotencyCompletion<Paymethod>; failOnDuplicate?: boolean },
  ): Promise<Paymethod> {
    let releases = 0;
    for (let attempt = 1; ; attempt += 1) {
      const joined = await this.customers.join(record);
      const transaction: TransactItem[] = [...joined.items];
      const paymethod: Paymethod = { ...record, is_default: joined.isDefault, version: 1 };
      transaction.push({ Put: { TableName: this.tableName, Item: paymethodItem(paymethod, secret), ConditionExpression: 'attribute_not_exists(pk)' } });
      const duplicateIndex = transaction.length;
      const membership = this.scopes.join(paymethod, options.failOnDuplicate === true);
      if (membership) transaction.push(membership);
      const ottIndex = transaction.length;
      if (options.consumeOneTimeToken) transaction.push(oneTimeTokenConsumption(this.tableName, options.consumeOneTimeToken, record.paymethod_token, options.now));
      const idempotencyIndex = transaction.length;
      const completion = options.completion && idempotencyCompletionWrite(this.tableName, options.completion, paymethod);
      if (completion) transaction.push(completion.item);
      const outcome = await transact(this.client, transaction);
      if (outcome === 'ok') {
        if (completion) options.completion?.committed(completion.response);
        return paymethod;
      }
      if (completion && outcome[idempotencyIndex] === 'ConditionalCheckFailed') throw idempotencyKeyLost();
      const tokenUsed = options.consumeOneTimeToken !== undefined && outcome[ottIndex] === 'ConditionalCheckFailed';
      if (membership && outcome[duplicateIndex] === 'ConditionalCheckFailed') {
        const existing = await this.scopes.holderOf(paymethod);
        if (existing) throw duplicatePaymethod(paymethod, existing);
        // Only former holders were in the way: not a lost race, so the create goes again without spending an attempt.
        if (!tokenUsed && releases < MAX_FORMER_HOLDER_RELEASES) {
          releases += 1;
          attempt -= 1;
          continue;
        }
      }
      if (tokenUsed) {
        throw new Conflict('ONE_TIME_TOKEN_USED', 'the one-time token has already been used');
      }
      // The customer's default changed under us (or a transaction conflict): decide again.
      if (attempt >= MAX_WRITE_ATTEMPTS) throw modifiedConcurrently('customer');
    }
  }
}
