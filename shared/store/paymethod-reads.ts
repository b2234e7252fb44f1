import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import type { Page, PageRequest, PaymethodQuery, PaymethodReads } from '#shared/domain/paymethods/ports.ts';
import type { SealedSecret } from '#shared/domain/vault.ts';
import { batchGet } from './batch.ts';
import { assertWithinRange, decodeCursor, encodeCursor, queryFingerprint } from './cursor.ts';
import { keys } from './keys.ts';
import { mergeSorted } from './merge-sorted.ts';
import type { PagedList } from './page-boundaries.ts';
import { PageBoundaries, collect } from './page-boundaries.ts';
import { PAYMETHOD_ENTITY, SECRET_ATTRIBUTE, paymethodFromItem } from './paymethod-item.ts';
import type { QueryPlan } from './paymethod-queries.ts';
import { PaymethodIndexes, answersPlan, planQuery } from './paymethod-queries.ts';
import { RETIRED_INDEXES, indexProjection } from '../platform/table.ts';

type Item = Record<string, unknown>;

/** Paymethod items by token (batchGet); unknown tokens, and items of another kind, are absent. */
export async function paymethodItemsByToken(client: Pick<DynamoDBDocumentClient, 'send'>, tableName: string, tokens: readonly string[], consistentRead: boolean): Promise<Item[]> {
  const found = await batchGet(client, tableName, [...new Set(tokens)].map((token) => keys.paymethod(token)), { consistentRead });
  return found.filter((item) => item.entity === PAYMETHOD_ENTITY);
}

/** A paymethod by token, its sealed number, and the lists: every read of the API. */
export class DynamoPaymethodReads implements PaymethodReads {
  private readonly pageBoundaries: PageBoundaries;

  private readonly indexes: PaymethodIndexes;

  /** @param indexStandIns TABLE_INDEX_STAND_INS (see PaymethodIndexes) */
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    indexStandIns?: string,
  ) {
    this.pageBoundaries = new PageBoundaries(client, tableName);
    this.indexes = new PaymethodIndexes(client, tableName, indexStandIns);
  }

  async get(paymethodToken: string): Promise<Paymethod | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: keys.paymethod(paymethodToken), ConsistentRead: false }));
    return Item ? paymethodFromItem(Item) : undefined;
  }

  async sealedNumber(paymethodToken: string): Promise<SealedSecret | undefined> {
    // The number never changes once sealed (an update cannot send one), so any copy of the item will do.
    const result = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: keys.paymethod(paymethodToken), ProjectionExpression: '#secret', ExpressionAttributeNames: { '#secret': SECRET_ATTRIBUTE } }),
    );
    return result.Item?.[SECRET_ATTRIBUTE] as SealedSecret | undefined;
  }

  async list(query: PaymethodQuery, page: PageRequest): Promise<Page<Paymethod>> {
    const plan = planQuery(query);
    // A successor orders its partitions as the index it replaced (the same keys): a cursor issued before the upgrade still holds.
    const sortedLike = RETIRED_INDEXES.find((retired) => retired.successor === plan.index)?.indexName ?? plan.index;
    const fingerprint = queryFingerprint([sortedLike, plan.partition, plan.from, plan.to, plan.filters]);
    const position = page.cursor === undefined ? undefined : decodeCursor(page.cursor, fingerprint, page);
    if (position) assertWithinRange(position, plan);
    // A write-sharded index (the Account Updater report) is its shards merged, paged like any other list.
    const list: PagedList = plan.shards
      ? this.mergedShards(plan, plan.shards, fingerprint)
      : {
          fingerprint: `mth-${fingerprint}`,
          queryOnePage: async ({ startKey, limit, ascending }) => {
            const result = await this.indexes.query(plan, limit, startKey, ascending);
            return { items: result.Items ?? [], lastEvaluatedKey: result.LastEvaluatedKey };
          },
          positionOf: (item) => ({ ...keys.paymethod(item.paymethod_token as string), [plan.partitionAttribute]: plan.partition, [plan.sortAttribute]: item[plan.sortAttribute] }),
          sortValueOf: (item) => item[plan.sortAttribute] as string,
        };
    // one more than the page tells whether a next page exists
    let collected: Item[];
    if (position) {
      const startKey = list.positionOf({ paymethod_token: position.token, [plan.sortAttribute]: position.sortValue });
      collected = (await collect(list.queryOnePage, startKey, page.pageSize + 1)).items;
    } else {
      collected = await this.pageBoundaries.readBarePage(list, page.pageIndex, page.pageSize);
    }

    return this.pageOf(collected, page, plan, fingerprint);
  }

  /**
   * A page from the index entries read (the page plus one look-ahead, which
   * only decides whether a next cursor exists). Over an index that projects
   * ALL the entries are the records; over a paymethod list index (keys and
   * immutable members only) the page's items are read from the table with one
   * BatchGetItem, eventually consistent like the index itself (half the read
   * units of a strongly consistent read), and kept in the index's order. An
   * item deleted between the Query and the read is left out, and so is one
   * that no longer answers the query: a page never shows a record its
   * filters exclude.
   */
  private async pageOf(collected: Item[], page: PageRequest, plan: QueryPlan, fingerprint: string): Promise<Page<Paymethod>> {
    const entries = collected.slice(0, page.pageSize);
    let items = entries;
    if (indexProjection(this.indexes.physicalIndex(plan.index)) !== 'ALL') {
      const tokenOf = (item: Item) => item.paymethod_token as string;
      const byToken = new Map((await paymethodItemsByToken(this.client, this.tableName, entries.map(tokenOf), false)).map((item) => [tokenOf(item), item]));
      items = entries.flatMap((entry): Item[] => {
        const item = byToken.get(tokenOf(entry));
        return item && answersPlan(item, plan) ? [item] : [];
      });
    }
    const last = entries.at(-1);
    const nextCursor =
      collected.length > page.pageSize && last
        ? encodeCursor({ token: last.paymethod_token as string, sortValue: last[plan.sortAttribute] as string, pageIndex: page.pageIndex + 1, pageSize: page.pageSize }, fingerprint)
        : undefined;
    return { items: items.map(paymethodFromItem), ...(nextCursor ? { nextCursor } : {}) };
  }

  /**
   * A write-sharded index as one newest-first list: each shard is read in
   * order and the streams are merged on the sort key, which is unique (it ends
   * with the token), so a position is a sort value alone. A call reads each
   * shard in steps that start a little above its share of the items asked for
   * and grow, so its cost follows the items returned, not the number of
   * shards times them. Page boundaries and cursors work on it as on a single
   * partition, so a bare page_index costs about a page once its boundaries
   * are known.
   */
  private mergedShards(plan: QueryPlan, shards: readonly string[], fingerprint: string): PagedList {
    const positionOf = (item: Item) => ({ [plan.sortAttribute]: item[plan.sortAttribute] });
    return {
      fingerprint: `mth-${fingerprint}`,
      queryOnePage: async ({ startKey, limit, ascending = false }) => {
        const after = startKey?.[plan.sortAttribute] as string | undefined;
        // A shard's share of the items asked for, and half again: the write shards split one organization's cards evenly.
        const firstStep = Math.ceil((1.5 * (limit + 1)) / shards.length) + 1;
        const streams = shards.map((partition) => this.shardInOrder({ ...plan, partition }, after, ascending, firstStep));
        const items: Item[] = [];
        // One more than asked tells whether the merged list goes on.
        for await (const item of mergeSorted(streams, (candidate) => candidate[plan.sortAttribute] as string, ascending ? 'ascending' : 'descending')) {
          items.push(item);
          if (items.length > limit) break;
        }
        const page = items.slice(0, limit);
        return { items: page, lastEvaluatedKey: items.length > limit ? positionOf(page.at(-1)!) : undefined };
      },
      positionOf,
      sortValueOf: (item) => item[plan.sortAttribute] as string,
    };
  }

  /** One shard's items after `after` (exclusive) within the plan's range, in order, read in steps of `firstStep` growing twofold. */
  private async *shardInOrder(plan: QueryPlan, after: string | undefined, ascending: boolean, firstStep: number): AsyncGenerator<Item, void, undefined> {
    // The range narrowed to the far side of `after` (inclusive: the item at `after` itself is skipped below).
    const bounded = after === undefined ? plan : ascending ? { ...plan, from: plan.from === undefined || after > plan.from ? after : plan.from } : { ...plan, to: plan.to === undefined || after < plan.to ? after : plan.to };
    let startKey: Item | undefined;
    let step = firstStep;
    do {
      const result = await this.indexes.query(bounded, Math.min(step, 1000), startKey, ascending);
      for (const item of result.Items ?? []) if (item[plan.sortAttribute] !== after) yield item;
      startKey = result.LastEvaluatedKey;
      step *= 2;
    } while (startKey);
  }
}
