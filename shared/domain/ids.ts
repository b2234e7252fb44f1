import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Uniform base62 characters by rejection sampling (bytes >= 248 are dropped, so
 * no character is more likely than another): 22 of them carry ~131 bits.
 */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export type TokenPrefix = 'mth_' | 'ott_' | 'doc_';

/** Prefix plus 22 random base62 characters: 26 in all, as the contract fixes. */
export function newToken(prefix: TokenPrefix): string {
  return prefix + randomBase62(22);
}

/** `org_` followed by letters, digits, `_` or `-`; administrators choose the rest. */
export const ORGANIZATION_ID_PATTERN = /^org_[A-Za-z0-9_-]{1,60}$/;

export function isOrganizationId(value: unknown): value is string {
  return typeof value === 'string' && ORGANIZATION_ID_PATTERN.test(value);
}
