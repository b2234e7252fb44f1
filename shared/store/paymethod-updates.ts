import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import type { PaymethodUpdates } from '#shared/domain/paymethods/ports.ts';
import { LEGACY_PAYMETHOD_LIST_KEY_ATTRIBUTES, keys } from './keys.ts';
import { VERSION_ATTRIBUTE, paymethodItem, setEach } from './paymethod-item.ts';
import { MAX_WRITE_ATTEMPTS, lostRace, modifiedConcurrently, PaymethodWrite } from './paymethod-writes.ts';
import type { TransactItem } from './write-conflicts.ts';
import { transact } from './write-conflicts.ts';

/**
 * An update through the API, in one transaction with what it moves: a move
 * to another customer leaves the old customer's pointer and joins the new
 * one's, and a new duplicate scope or fingerprint moves the record's entry.
 */
export class DynamoPaymethodUpdates extends PaymethodWrite implements PaymethodUpdates {
  async update(current: Paymethod, next: Paymethod): Promise<Paymethod> {
    for (let attempt = 1; ; attempt += 1) {
      const transaction: TransactItem[] = [];
      let updated: Paymethod = { ...next, version: current.version + 1 };
      if (next.customer_token !== current.customer_token) {
        transaction.push(...(await this.customers.leave(current)));
        const joined = await this.customers.join({ ...next, paymethod_token: current.paymethod_token });
        transaction.push(...joined.items);
        updated = { ...updated, is_default: joined.isDefault };
      }
      transaction.push(...this.scopes.move(current, updated));
      const ownIndex = transaction.length;
      transaction.push({ Update: this.overwrite(current, updated) });
      const outcome = await transact(this.client, transaction);
      if (outcome === 'ok') return updated;
      if (outcome[ownIndex] === 'ConditionalCheckFailed') throw lostRace(current);
      if (attempt >= MAX_WRITE_ATTEMPTS) throw modifiedConcurrently('paymethod');
    }
  }

  /** SET every member and index key of `next`, REMOVE what it no longer has; checked against `current`'s version. */
  private overwrite(current: Paymethod, next: Paymethod) {
    const { pk: _pk, sk: _sk, ...wanted } = paymethodItem(next, undefined);
    const { pk: _cpk, sk: _csk, ...had } = paymethodItem(current, undefined);
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':expected': current.version };
    const set = setEach(wanted, names, values);
    const removes = [...Object.keys(had), ...LEGACY_PAYMETHOD_LIST_KEY_ATTRIBUTES]
      .filter((name) => !(name in wanted))
      .map((name, index) => {
        names[`#r${index}`] = name;
        return `#r${index}`;
      });
    names['#version'] = VERSION_ATTRIBUTE;
    return {
      TableName: this.tableName,
      Key: keys.paymethod(current.paymethod_token),
      UpdateExpression: `${set}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
      ConditionExpression: '#version = :expected',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    };
  }
}
