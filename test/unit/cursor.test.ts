import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, queryFingerprint } from '#shared/store/cursor.ts';

describe('list cursors', () => {
  const fingerprint = queryFingerprint(['gsi1', 'LOC#org_1#loc_1#MTH']);
  const position = { token: 'mth_abcDEF123', sortValue: '2026-01-01T00:00:00.000Z#mth_abcDEF123', pageIndex: 2 };

  it('round-trips and is URL-safe', () => {
    const cursor = encodeCursor(position, fingerprint);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, fingerprint, 2)).toEqual(position);
  });

  it('refuses a cursor of another query, another page, or garbage', () => {
    const cursor = encodeCursor(position, fingerprint);
    expect(() => decodeCursor(cursor, queryFingerprint(['gsi1', 'LOC#org_2#loc_1#MTH']), 2)).toThrow(/another query/);
    expect(() => decodeCursor(cursor, fingerprint, 3)).toThrow(/page/);
    expect(() => decodeCursor('not a cursor!', fingerprint, 2)).toThrow();
    expect(() => decodeCursor(Buffer.from('{"t":"x"}').toString('base64url'), fingerprint, 2)).toThrow();
  });
});
