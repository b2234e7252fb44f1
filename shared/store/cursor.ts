import { createHash } from 'node:crypto';
import { InvalidRequest } from '#shared/domain/errors.ts';

/**
 * Opaque list cursors. A cursor names the last item of a page (its token and
 * its sort value in the index the query used), the page it leads to and the
 * page size that page is counted in, and a fingerprint of the query (index,
 * partition, filters). The partition always
 * comes from the request's path, never from the cursor, so a forged cursor can
 * at most move within the caller's own result set; one made for another query
 * is refused.
 */
export interface CursorPosition {
  /** Token of the last item returned. */
  token: string;
  /** That item's sort-key value in the index the query reads. */
  sortValue: string;
  /** Zero-based index of the page the cursor leads to. */
  pageIndex: number;
  /** The page size it was made with: page n starts after n pages of this size, of no other. */
  pageSize: number;
}

const TOKEN_PATTERN = /^mth_[A-Za-z0-9]{1,40}$/;
/** The instant every list index sorts on: paymethods `<instant>#<token>`, documents `DOC#<instant>#<id>` (keys.ts). */
export const SORT_INSTANT_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;

export function queryFingerprint(parts: readonly unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 16);
}

export function encodeCursor(position: CursorPosition, fingerprint: string): string {
  return Buffer.from(JSON.stringify({ t: position.token, s: position.sortValue, n: position.pageIndex, z: position.pageSize, q: fingerprint }), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, fingerprint: string, expected: { pageIndex: number; pageSize: number }): CursorPosition {
  const invalid = (message: string) => new InvalidRequest([{ field: 'cursor', message }], 'INVALID_CURSOR');
  if (cursor.length > 1024 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid('is not a valid cursor');
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid('is not a valid cursor');
  }
  const { t, s, n, z, q } = (decoded ?? {}) as Record<string, unknown>;
  if (typeof t !== 'string' || !TOKEN_PATTERN.test(t) || typeof s !== 'string' || !isSortValueOf(s, t) || typeof n !== 'number' || !Number.isInteger(n)) {
    throw invalid('is not a valid cursor');
  }
  if (z !== undefined && (typeof z !== 'number' || !Number.isInteger(z))) throw invalid('is not a valid cursor');
  if (q !== fingerprint) throw invalid('belongs to another query (filters or path changed)');
  if (n !== expected.pageIndex) throw invalid(`leads to page ${n}, not page_index ${expected.pageIndex}`);
  // Cursors issued before they named their page size carry none: they are taken as made for this one.
  if (z !== undefined && z !== expected.pageSize) throw invalid(`was made for page_size ${z}, not ${expected.pageSize}`);
  return { token: t, sortValue: s, pageIndex: n, pageSize: expected.pageSize };
}

/** A sort value an index can hold for the item: an edited one would make DynamoDB refuse the start key (a 5xx, not the caller's 400). */
function isSortValueOf(sortValue: string, token: string): boolean {
  const instant = sortValue.slice(0, -(token.length + 1));
  return sortValue === `${instant}#${token}` && SORT_INSTANT_PATTERN.test(instant);
}

/**
 * A cursor names the last item of the page before it, which the query's range
 * held; one past either end was edited, and DynamoDB would refuse it as a
 * start key (or as the upper bound of a merged read).
 */
export function assertWithinRange(position: CursorPosition, range: SortRange): void {
  if (!isWithinRange(position.sortValue, range)) {
    throw new InvalidRequest([{ field: 'cursor', message: "lies outside the query's range; follow links.next as given" }], 'INVALID_CURSOR');
  }
}

/** A query's range on its index's sort key; either end may be open. */
export interface SortRange {
  from?: string | undefined;
  to?: string | undefined;
}

export function isWithinRange(sortValue: string, { from, to }: SortRange): boolean {
  return (from === undefined || sortValue >= from) && (to === undefined || sortValue <= to);
}
