/**
 * A customer's default pointer, the one owner of its layout: which of the
 * customer's paymethods is the default, and how many the customer has. Every
 * create, delete and move adds the writes built here to its own transaction,
 * so the pointer and the paymethods' `is_default` change in one commit.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import { keys } from './keys.ts';
import { becomeDefault, paymethodFromItem } from './paymethod-item.ts';
import type { PaymethodIndexes } from './paymethod-queries.ts';
import { planQuery } from './paymethod-queries.ts';
import type { TransactItem } from './write-conflicts.ts';

type Item = Record<string, unknown>;

/**
 * The default pointer's count of the customer's paymethods, kept by every
 * create, delete and move in the same commit.
 */
const PAYMETHOD_COUNT = 'paymethod_count';
/**
 * How long the leaving default waits, between reads of the customer index,
 * for a paymethod its pointer counts and the index does not show yet: a
 * global secondary index usually follows its table within a second.
 */
const CUSTOMER_INDEX_LAG_WAITS_MS = [50, 100, 200, 400, 800];

/** A customer's default pointer as read: its key, the default's token, and the customer's paymethods. */
interface DefaultPointer {
  key: Item;
  holder: string;
  count: number;
  /** False for a pointer written before counts were kept: `count` is then the customer index's. */
  counted: boolean;
}

/** The condition that a pointer is still as it was read. */
function unchanged(pointer: DefaultPointer): { ConditionExpression: string; ExpressionAttributeNames: Record<string, string>; ExpressionAttributeValues: Record<string, unknown> } {
  return pointer.counted
    ? { ConditionExpression: 'paymethod_token = :holder AND #count = :read', ExpressionAttributeNames: { '#count': PAYMETHOD_COUNT }, ExpressionAttributeValues: { ':holder': pointer.holder, ':read': pointer.count } }
    : { ConditionExpression: 'paymethod_token = :holder AND attribute_not_exists(#count)', ExpressionAttributeNames: { '#count': PAYMETHOD_COUNT }, ExpressionAttributeValues: { ':holder': pointer.holder } };
}

export class CustomerDefaults {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly indexes: PaymethodIndexes,
  ) {}

  /**
   * The writes that keep `current`'s customer coherent as it leaves (a delete,
   * or a move to another customer): one paymethod fewer on the pointer, and,
   * when it was the default, the newest other paymethod as the new default,
   * or no pointer when it was the last. The pointer's exact count is what
   * makes the "last" decision safe: a create that commits between this read
   * and this commit changes the count, so this commit's condition fails and
   * the caller decides again, and a paymethod the customer index does not
   * show yet (it lags its table) is waited for, not taken for absent.
   */
  async leave(current: Paymethod): Promise<TransactItem[]> {
    if (!current.customer_token) return [];
    const pointer = await this.readPointer(current.organization_id, current.customer_token);
    // No pointer: a customer left without one before counts were kept; there is nothing to keep coherent.
    if (!pointer) return [];
    if (pointer.holder !== current.paymethod_token) return [this.countChange(pointer, -1)];
    const others = pointer.count - 1;
    let replacement = await this.newestOtherOf(current);
    for (const wait of CUSTOMER_INDEX_LAG_WAITS_MS) {
      if (replacement || others < 1) break;
      await sleep(wait);
      replacement = await this.newestOtherOf(current);
    }
    // Past the waits, the index is believed over the count: a pointer's first count came from the index and can
    // be off, and a customer must never be left unable to delete its last paymethod.
    if (!replacement) return [{ Delete: { TableName: this.tableName, Key: pointer.key, ...unchanged(pointer) } }];
    return [
      { Put: { TableName: this.tableName, Item: { ...pointer.key, paymethod_token: replacement.paymethod_token, [PAYMETHOD_COUNT]: Math.max(others, 1) }, ...unchanged(pointer) } },
      becomeDefault(this.tableName, replacement.paymethod_token, current.customer_token),
    ];
  }

  /** The write that counts `record` into its customer, and makes it the default when the customer has none. */
  async join(record: Pick<Paymethod, 'organization_id' | 'customer_token' | 'paymethod_token'>): Promise<{ items: TransactItem[]; isDefault: boolean }> {
    if (!record.customer_token) return { items: [], isDefault: false };
    const pointer = await this.readPointer(record.organization_id, record.customer_token);
    if (pointer) return { items: [this.countChange(pointer, 1)], isDefault: false };
    // The pointer item is the customer's "has a default" lock: only one first paymethod can create it.
    const key = keys.customerDefault(record.organization_id, record.customer_token);
    return {
      items: [{ Put: { TableName: this.tableName, Item: { ...key, paymethod_token: record.paymethod_token, [PAYMETHOD_COUNT]: 1 }, ConditionExpression: 'attribute_not_exists(pk)' } }],
      isDefault: true,
    };
  }

  /**
   * One paymethod more or fewer on a pointer that stays as it is otherwise.
   * A counted pointer takes it with ADD, so concurrent creates and deletes of
   * the customer's other paymethods do not stand in each other's way; a
   * pointer from before counts were kept gets its first count, as read.
   */
  private countChange(pointer: DefaultPointer, change: 1 | -1): TransactItem {
    const names = { '#count': PAYMETHOD_COUNT };
    if (pointer.counted) {
      return { Update: { TableName: this.tableName, Key: pointer.key, UpdateExpression: 'ADD #count :change', ConditionExpression: 'attribute_exists(#count)', ExpressionAttributeNames: names, ExpressionAttributeValues: { ':change': change } } };
    }
    const { ConditionExpression, ExpressionAttributeValues } = unchanged(pointer);
    return {
      Update: {
        TableName: this.tableName,
        Key: pointer.key,
        UpdateExpression: 'SET #count = :count',
        ConditionExpression,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ...ExpressionAttributeValues, ':count': Math.max(pointer.count + change, 1) },
      },
    };
  }

  /** The customer's default pointer, strongly consistent; a pointer from before counts were kept is counted now. */
  private async readPointer(organizationId: string, customerToken: string): Promise<DefaultPointer | undefined> {
    const key = keys.customerDefault(organizationId, customerToken);
    const { Item: item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }));
    if (!item) return undefined;
    const stored = item[PAYMETHOD_COUNT];
    const holder = item.paymethod_token as string;
    if (typeof stored === 'number') return { key, holder, count: stored, counted: true };
    return { key, holder, count: await this.indexes.count(planQuery({ organizationId, customerToken })), counted: false };
  }

  /** The customer's newest paymethod other than `current`: the next default by the documented rule. */
  private async newestOtherOf(current: Paymethod): Promise<Paymethod | undefined> {
    const plan = planQuery({ organizationId: current.organization_id, customerToken: current.customer_token });
    const result = await this.indexes.query(plan, 2, undefined);
    const other = (result.Items ?? []).find((item) => item.paymethod_token !== current.paymethod_token);
    return other ? paymethodFromItem(other) : undefined;
  }
}
