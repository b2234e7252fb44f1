import { BatchWriteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { keys } from './keys.ts';
import { TTL_ATTRIBUTE } from '../platform/table.ts';

/**
 * Paging a newest-first list by a bare `page_index` (no cursor) without
 * reading every earlier page.
 *
 * A page boundary is the exclusive start key of page n of one query (index,
 * partition, range, filters, page size), remembered with the list's newest
 * sort value at that moment (its "head"). Serving a page remembers the
 * boundary of the next one; skipping (the first time a page is asked for)
 * remembers every boundary it passes. A bare page_index then starts from the
 * nearest remembered boundary at or before it:
 *
 * - records created since the boundary was remembered sort above the head
 *   (newest first), so they are counted (usually none: one item read) and the
 *   start moves back by as many items, read oldest-first from the boundary;
 *   the page is then exactly what following `links.next` from page 0 gives now;
 * - records deleted (or moved: an Account Updater update on its report list,
 *   a paymethod moved to another customer) before the boundary are not seen
 *   until the boundary expires (BOUNDARY_TTL_SECONDS), as a page read by
 *   offset shifts when records before it go away between requests.
 *
 * Boundaries are a cache: a missing, expired or inconsistent one falls back to
 * skipping from the top, and a failed write only costs the next request a skip.
 * It works over any list that can "query one page from a cursor"; it knows
 * nothing of the list's keys.
 */

type Item = Record<string, unknown>;

/** One Query call of a list: newest first (or oldest first when `ascending`), after `startKey`, at most `limit` items evaluated. */
export type QueryOnePage = (request: { startKey: Item | undefined; limit: number; ascending?: boolean }) => Promise<{ items: Item[]; lastEvaluatedKey: Item | undefined }>;

export interface PagedList {
  /** Identifies the query: index, partition, range and filters (the cursor's fingerprint). */
  fingerprint: string;
  queryOnePage: QueryOnePage;
  /** The exclusive start key that resumes right after `item`. */
  positionOf(item: Item): Item;
  /** The item's sort value in the list's index: newer is larger. */
  sortValueOf(item: Item): string;
}

/** How long a remembered boundary is trusted: it bounds how long a deletion can shift a bare page. */
export const BOUNDARY_TTL_SECONDS = 300;
/** Boundaries written by one request at most (skipping far writes the ones nearest the page asked for). */
const MAX_BOUNDARIES_WRITTEN = 50;
/** More records created since a boundary than this: skip from the top instead (and remember afresh). */
const MAX_NEW_RECORDS_COUNTED = 1000;

interface Boundary {
  pageIndex: number;
  position: Item;
  head: string;
}

export class PageBoundaries {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Page `pageIndex` of `list` read without a cursor: up to `pageSize + 1`
   * items (one more than the page tells whether another page exists).
   */
  async readBarePage(list: PagedList, pageIndex: number, pageSize: number): Promise<Item[]> {
    if (pageIndex === 0) return (await collect(list.queryOnePage, undefined, pageSize + 1)).items;
    const { base, next } = await this.nearest(list.fingerprint, pageSize, pageIndex);
    const toWrite: Boundary[] = [];

    let start: Item | undefined;
    let startPage = 0;
    let head: string | undefined;
    const anchored = base && (await this.reanchor(list, base));
    if (anchored) {
      ({ start, head } = anchored);
      startPage = base.pageIndex;
      if (anchored.moved) toWrite.push({ pageIndex: startPage, position: start, head });
    }

    // Skip the pages between the boundary (or the top) and the page asked for, remembering each boundary passed.
    const toSkip = (pageIndex - startPage) * pageSize;
    if (toSkip > 0) {
      const skipped = await collect(list.queryOnePage, start, toSkip);
      if (head === undefined && skipped.items[0]) head = list.sortValueOf(skipped.items[0]);
      for (let page = startPage + 1; page <= pageIndex && (page - startPage) * pageSize <= skipped.items.length; page += 1) {
        toWrite.push({ pageIndex: page, position: list.positionOf(skipped.items[(page - startPage) * pageSize - 1] as Item), head: head as string });
      }
      if (skipped.items.length < toSkip) {
        await this.remember(list.fingerprint, pageSize, toWrite);
        return [];
      }
      start = list.positionOf(skipped.items.at(-1) as Item);
    }

    const items = (await collect(list.queryOnePage, start, pageSize + 1)).items;
    if (head === undefined && items[0]) head = list.sortValueOf(items[0]);
    const last = items[pageSize - 1];
    if (items.length > pageSize && last && head !== undefined) {
      const position = list.positionOf(last);
      const known = next && next.head === head && samePosition(next.position, position);
      if (!known) toWrite.push({ pageIndex: pageIndex + 1, position, head });
    }
    await this.remember(list.fingerprint, pageSize, toWrite);
    return items;
  }

  /**
   * Where the boundary's page starts now: the same place if nothing was
   * created since it was remembered, else as many items earlier as were
   * created. Undefined when that cannot be told (too many new records, or the
   * items before the boundary are gone).
   */
  private async reanchor(list: PagedList, base: Boundary): Promise<{ start: Item; head: string; moved: boolean } | undefined> {
    const newer = await collect(list.queryOnePage, undefined, MAX_NEW_RECORDS_COUNTED + 1, { firstLimit: 1, stopAt: (item) => list.sortValueOf(item) <= base.head });
    const created = newer.items.length;
    if (created === 0) return { start: base.position, head: base.head, moved: false };
    if (created > MAX_NEW_RECORDS_COUNTED) return undefined;
    const earlier = await collect(list.queryOnePage, base.position, created, { ascending: true });
    if (earlier.items.length < created) return undefined;
    return { start: list.positionOf(earlier.items[created - 1] as Item), head: list.sortValueOf(newer.items[0] as Item), moved: true };
  }

  /** The fresh boundary nearest at or before `pageIndex`, and the one of the page after it if known: one small Query. */
  private async nearest(fingerprint: string, pageSize: number, pageIndex: number): Promise<{ base?: Boundary; next?: Boundary }> {
    const partition = keys.pageBoundary(fingerprint, pageSize, 0).pk;
    const result = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND sk <= :upTo',
        ExpressionAttributeValues: { ':pk': partition, ':upTo': keys.pageBoundary(fingerprint, pageSize, pageIndex + 1).sk },
        ScanIndexForward: false,
        Limit: 2,
      }),
    );
    const now = Math.floor(this.clock() / 1000);
    const fresh = (result.Items ?? [])
      .filter((item) => typeof item[TTL_ATTRIBUTE] === 'number' && (item[TTL_ATTRIBUTE] as number) > now)
      .map((item): Boundary => ({ pageIndex: item.page_index as number, position: item.position as Item, head: item.head as string }));
    return { base: fresh.find((boundary) => boundary.pageIndex <= pageIndex), next: fresh.find((boundary) => boundary.pageIndex === pageIndex + 1) };
  }

  /** Best effort: a boundary not written costs a later request one skip, never a wrong page. */
  private async remember(fingerprint: string, pageSize: number, boundaries: Boundary[]): Promise<void> {
    const expiresAt = Math.floor(this.clock() / 1000) + BOUNDARY_TTL_SECONDS;
    const items = boundaries.slice(-MAX_BOUNDARIES_WRITTEN).map((boundary) => ({
      PutRequest: {
        Item: { ...keys.pageBoundary(fingerprint, pageSize, boundary.pageIndex), page_index: boundary.pageIndex, position: boundary.position, head: boundary.head, [TTL_ATTRIBUTE]: expiresAt },
      },
    }));
    const batches: Array<typeof items> = [];
    for (let index = 0; index < items.length; index += 25) batches.push(items.slice(index, index + 25));
    await Promise.all(
      batches.map((batch) => this.client.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: batch } })).catch(() => undefined)),
    );
  }
}

/**
 * Reads matching items after `startKey` until `wanted` are collected, the list
 * ends, or `stopAt` says an item is past what is wanted (Limit counts items
 * evaluated before filters, so a filtered list may need several calls). With
 * `firstLimit` the calls start that small and grow fourfold, for reads that
 * usually stop at once: their cost follows what is found, not `wanted`.
 */
export async function collect(
  queryOnePage: QueryOnePage,
  startKey: Item | undefined,
  wanted: number,
  options: { ascending?: boolean; firstLimit?: number; stopAt?: (item: Item) => boolean } = {},
): Promise<{ items: Item[] }> {
  const items: Item[] = [];
  let exclusiveStartKey = startKey;
  let limit = options.firstLimit;
  for (;;) {
    const result = await queryOnePage({ startKey: exclusiveStartKey, limit: Math.min(limit ?? wanted - items.length, wanted - items.length, 1000), ascending: options.ascending });
    for (const item of result.items) {
      if (options.stopAt?.(item)) return { items };
      items.push(item);
    }
    exclusiveStartKey = result.lastEvaluatedKey;
    if (!exclusiveStartKey || items.length >= wanted) return { items: items.slice(0, wanted) };
    if (limit !== undefined) limit *= 4;
  }
}

function samePosition(a: Item, b: Item): boolean {
  const names = Object.keys(a);
  return names.length === Object.keys(b).length && names.every((name) => a[name] === b[name]);
}
