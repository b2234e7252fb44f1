/** Pure field rules of the spec and the contract, shared by validation and tests. */

/** Lengths count Unicode code points, not UTF-16 units (an emoji is one character). */
export function codePointLength(value: string): number {
  let count = 0;
  for (const _ of value) count += 1;
  return count;
}

export const isDigits = (value: string): boolean => /^[0-9]+$/.test(value);

/** Luhn (mod 10) check over a string of digits. */
export function passesLuhn(digits: string): boolean {
  if (!isDigits(digits)) return false;
  let sum = 0;
  let double = false;
  for (let index = digits.length - 1; index >= 0; index -= 1) {
    let digit = digits.charCodeAt(index) - 48;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    double = !double;
  }
  return sum % 10 === 0;
}

/** ABA routing number checksum: 3-7-1 weights over the nine digits. */
export function passesAbaChecksum(routing: string): boolean {
  if (!/^[0-9]{9}$/.test(routing)) return false;
  const d = [...routing].map((char) => char.charCodeAt(0) - 48);
  const sum = 3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + (d[2]! + d[5]! + d[8]!);
  return sum % 10 === 0;
}

/**
 * Canadian routing numbers printed BBBBB-AAA are submitted as 0AAABBBBB
 * (leading zero, institution, branch); they carry no checksum.
 */
export const isCanadianRouting = (routing: string): boolean => /^0[0-9]{8}$/.test(routing);

export const isValidRoutingNumber = (routing: string): boolean => passesAbaChecksum(routing) || isCanadianRouting(routing);

/** An expiry is valid through the end of its month, so the current UTC month still passes. */
export function isExpiryCurrentOrFuture(month: number, year: number, now: Date): boolean {
  const nowYear = now.getUTCFullYear();
  const nowMonth = now.getUTCMonth() + 1;
  return year > nowYear || (year === nowYear && month >= nowMonth);
}

export const lastFour = (accountNumber: string): string => accountNumber.slice(-4);
export const masked = (accountNumber: string): string => `****${lastFour(accountNumber)}`;

export const CARD_TYPES = ['visa', 'mast', 'amex', 'disc', 'dine', 'jcb'] as const;
export const SEC_CODES = ['ARC', 'CCD', 'CIE', 'CTX', 'POP', 'POS', 'PPD', 'RCK', 'TEL', 'WEB'] as const;
export const ACCOUNT_TYPES = ['checking', 'savings'] as const;
export const PAYMETHOD_TYPES = ['card', 'echeck', 'vendor'] as const;
