import { describe, expect, it } from 'vitest';
import { assertWithinRange, decodeCursor, encodeCursor, queryFingerprint } from '#shared/store/cursor.ts';

describe('list cursors', () => {
  const fingerprint = queryFingerprint(['gsi1', 'LOC#org_1#loc_1#MTH']);
  const position = { token: 'mth_abcDEF123', sortValue: '2026-01-01T00:00:00.000Z#mth_abcDEF123', pageIndex: 2, pageSize: 3 };
  const page = { pageIndex: 2, pageSize: 3 };

  it('round-trips and is URL-safe', () => {
    const cursor = encodeCursor(position, fingerprint);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, fingerprint, page)).toEqual(position);
  });

  it('refuses a cursor of another query, another page, or garbage', () => {
    const cursor = encodeCursor(position, fingerprint);
    expect(() => decodeCursor(cursor, queryFingerprint(['gsi1', 'LOC#org_2#loc_1#MTH']), page)).toThrow(/another query/);
    expect(() => decodeCursor(cursor, fingerprint, { ...page, pageIndex: 3 })).toThrow(/page/);
    expect(() => decodeCursor('not a cursor!', fingerprint, page)).toThrow();
    expect(() => decodeCursor(Buffer.from('{"t":"x"}').toString('base64url'), fingerprint, page)).toThrow();
  });

  it('refuses a cursor made with another page size: page n starts after n pages of its own size', () => {
    expect(() => decodeCursor(encodeCursor(position, fingerprint), fingerprint, { ...page, pageSize: 2 })).toThrow(/was made for page_size 3, not 2/);
    // One issued before cursors named their page size is taken as made for the request's.
    const older = Buffer.from(JSON.stringify({ t: position.token, s: position.sortValue, n: 2, q: fingerprint })).toString('base64url');
    expect(decodeCursor(older, fingerprint, { ...page, pageSize: 7 })).toEqual({ ...position, pageSize: 7 });
  });
});

describe('edited list cursors', () => {
  const fingerprint = queryFingerprint(['gsi10', 'AU#org_1#S0']);
  const edited = (sortValue: string) => Buffer.from(JSON.stringify({ t: 'mth_abcDEF123', s: sortValue, n: 1, q: fingerprint })).toString('base64url');

  it("refuses a sort value an index cannot hold for the cursor's item", () => {
    for (const sortValue of ['', '#mth_abcDEF123', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z#mth_other', 'yesterday#mth_abcDEF123', '2026-01-01T00:00:00.000Z#mth_abcDEF123#']) {
      expect(() => decodeCursor(edited(sortValue), fingerprint, { pageIndex: 1, pageSize: 50 }), sortValue).toThrow(/not a valid cursor/);
    }
    expect(decodeCursor(edited('2026-01-01T00:00:00Z#mth_abcDEF123'), fingerprint, { pageIndex: 1, pageSize: 50 }).sortValue).toBe('2026-01-01T00:00:00Z#mth_abcDEF123');
  });

  it("refuses a position outside the query's range, and takes one at either end", () => {
    const range = { from: '2026-05-01T00:00:00', to: '2026-05-31T23:59:59~' };
    const at = (sortValue: string) => ({ token: 'mth_abcDEF123', sortValue, pageIndex: 1, pageSize: 50 });
    expect(() => assertWithinRange(at('2026-04-30T23:59:59.999Z#mth_abcDEF123'), range)).toThrow(/outside the query's range/);
    expect(() => assertWithinRange(at('2026-06-01T00:00:00.000Z#mth_abcDEF123'), range)).toThrow(/outside the query's range/);
    for (const sortValue of ['2026-05-01T00:00:00.000Z#mth_abcDEF123', '2026-05-31T23:59:59.999Z#mth_abcDEF123']) expect(() => assertWithinRange(at(sortValue), range)).not.toThrow();
    expect(() => assertWithinRange(at('1999-01-01T00:00:00.000Z#mth_abcDEF123'), {})).not.toThrow();
  });
});
