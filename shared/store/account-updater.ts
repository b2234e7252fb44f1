import { BatchGetCommand, PutCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient, QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type {
  AccountUpdateHistory,
  AccountUpdateRecord,
  AccountUpdaterStore,
  CardChange,
  StoredPaymethod,
} from '#shared/domain/account-updater/ports.ts';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import type { SealedSecret } from '#shared/domain/vault.ts';
import { keys, withoutKeys } from './keys.ts';
import { duplicateScopeMove } from './paymethods.ts';
import { TTL_ATTRIBUTE } from './table.ts';

/** History and month markers are kept about 13 months, then DynamoDB's TTL removes them. */
const HISTORY_RETENTION_SECONDS = 400 * 24 * 3600;
const MAX_BATCH_GET_ATTEMPTS = 8;

export interface AccountUpdaterStoreOptions {
  /** When set, reads ask for their consumed capacity and report it here (benchmarks). */
  onRead?: (report: { operation: 'BatchGetItem' | 'Query'; consumedCapacity?: number }) => void;
}

/**
 * The Account Updater's storage: card lookups in batches, one transaction per
 * applied row (the card and its history item), and the history reads the
 * monthly export streams. Keys come from keys.ts, like every other item.
 */
export class DynamoAccountUpdaterStore implements AccountUpdaterStore, AccountUpdateHistory {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly options: AccountUpdaterStoreOptions = {},
  ) {}

  async getPaymethods(tokens: readonly string[]): Promise<Map<string, StoredPaymethod>> {
    const found = new Map<string, StoredPaymethod>();
    let pending: Array<Record<string, unknown>> = [...new Set(tokens)].map((token) => keys.paymethod(token));
    for (let attempt = 1; pending.length > 0; attempt += 1) {
      if (attempt > MAX_BATCH_GET_ATTEMPTS) throw new Error(`BatchGetItem left ${pending.length} keys unprocessed after ${MAX_BATCH_GET_ATTEMPTS} attempts`);
      if (attempt > 1) await backoff(attempt);
      const result = await this.client.send(
        new BatchGetCommand({
          RequestItems: { [this.tableName]: { Keys: pending, ConsistentRead: true } },
          ...(this.options.onRead ? { ReturnConsumedCapacity: 'TOTAL' as const } : {}),
        }),
      );
      this.options.onRead?.({ operation: 'BatchGetItem', consumedCapacity: result.ConsumedCapacity?.[0]?.CapacityUnits });
      for (const item of result.Responses?.[this.tableName] ?? []) {
        if (item.entity !== 'paymethod') continue;
        const { vault, entity: _entity, ...rest } = withoutKeys(item);
        const paymethod = rest as unknown as Paymethod;
        found.set(paymethod.paymethod_token, { paymethod, ...(vault ? { secret: vault as SealedSecret } : {}) });
      }
      pending = (result.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as Array<Record<string, unknown>>;
    }
    return found;
  }

  async markMonth(month: string, organizationId: string): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...keys.auMonth(month, organizationId), entity: 'au-month', month, organization_id: organizationId, [TTL_ATTRIBUTE]: expiry() },
      }),
    );
  }

  async applyCardUpdate(change: CardChange): Promise<'applied' | 'conflict'> {
    const { current, card, secret, history } = change;
    const token = current.paymethod_token;
    const org = current.organization_id;
    const auDate = card.au_updated_date as string;
    const nextVersion = current.version + 1;
    const names: Record<string, string> = { '#card': 'card', '#version': 'version', '#type': 'paymethod_type', '#updated': 'updated_at' };
    const values: Record<string, unknown> = { ':card': card, ':expected': current.version, ':next': nextVersion, ':type': 'card', ':updated': auDate };
    const sets = ['#card = :card', '#version = :next', '#updated = :updated'];
    const set = (attribute: string, value: unknown) => {
      const index = sets.length;
      names[`#a${index}`] = attribute;
      values[`:a${index}`] = value;
      sets.push(`#a${index} = :a${index}`);
    };
    if (secret) set('vault', secret);
    for (const [attribute, value] of Object.entries(keys.paymethodAuByOrganization(org, auDate, token))) set(attribute, value);
    if (current.location_id) for (const [attribute, value] of Object.entries(keys.paymethodAuByLocation(org, current.location_id, auDate, token))) set(attribute, value);
    // A new number's fingerprint: its index key and its duplicate scope entry move with it, in this same transaction.
    const next = { ...current, card };
    if (card.fingerprint) for (const [attribute, value] of Object.entries(keys.paymethodByFingerprint(org, card.fingerprint, current.created_at, token))) set(attribute, value);
    const fingerprintMove = duplicateScopeMove(this.tableName, current, next);

    const month = auDate.slice(0, 7);
    try {
      await this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.tableName,
                Key: keys.paymethod(token),
                UpdateExpression: `SET ${sets.join(', ')}`,
                ConditionExpression: '#version = :expected AND #type = :type',
                ExpressionAttributeNames: names,
                ExpressionAttributeValues: values,
              },
            },
            {
              Put: {
                TableName: this.tableName,
                Item: { ...keys.auHistory(org, month, auDate, token, nextVersion), entity: 'au-history', ...history, [TTL_ATTRIBUTE]: expiry() },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            ...fingerprintMove,
          ],
        }),
      );
      return 'applied';
    } catch (error) {
      if ((error as Error).name !== 'TransactionCanceledException') throw error;
      const reasons = (error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons ?? [];
      // A lost race (condition failed) or a transaction conflict: the caller reads the card again.
      if (reasons.some((reason) => reason.Code === 'ConditionalCheckFailed' || reason.Code === 'TransactionConflict')) return 'conflict';
      throw error;
    }
  }

  async *organizationsWithUpdates(month: string): AsyncIterable<string> {
    for await (const item of this.queryAll({ ':pk': keys.auMonth(month, '').pk })) yield item.organization_id as string;
  }

  async *updatesOf(organizationId: string, month: string): AsyncIterable<AccountUpdateRecord> {
    for await (const item of this.queryAll({ ':pk': keys.auHistory(organizationId, month, '', '', 0).pk })) {
      const { entity: _entity, ...record } = withoutKeys(item);
      yield record as unknown as AccountUpdateRecord;
    }
  }

  /** Every item of one partition, ascending by sort key, a page at a time. */
  private async *queryAll(values: { ':pk': string }): AsyncGenerator<Record<string, unknown>> {
    let startKey: Record<string, unknown> | undefined;
    do {
      const input: QueryCommandInput = {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: values,
        ScanIndexForward: true,
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        ...(this.options.onRead ? { ReturnConsumedCapacity: 'TOTAL' as const } : {}),
      };
      const result = await this.client.send(new QueryCommand(input));
      this.options.onRead?.({ operation: 'Query', consumedCapacity: result.ConsumedCapacity?.CapacityUnits });
      yield* result.Items ?? [];
      startKey = result.LastEvaluatedKey;
    } while (startKey);
  }
}

function expiry(): number {
  return Math.ceil(Date.now() / 1000) + HISTORY_RETENTION_SECONDS;
}

function backoff(attempt: number): Promise<void> {
  const ms = Math.min(2_000, 25 * 2 ** attempt) * (0.5 + Math.random() / 2);
  return new Promise((resolve) => setTimeout(resolve, ms));
}
