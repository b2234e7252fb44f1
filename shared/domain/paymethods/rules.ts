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

/** Issuer prefixes (IIN ranges) per card_type, as inclusive ranges over the number's first digits. */
export const CARD_BRANDS: Readonly<Record<(typeof CARD_TYPES)[number], { ranges: ReadonlyArray<readonly [string, string]>; length?: number; rule: string }>> = {
  visa: { ranges: [['4', '4']], rule: 'a visa number starts with 4' },
  mast: { ranges: [['51', '55'], ['2221', '2720']], rule: 'a mast number starts with 51 to 55 or 2221 to 2720' },
  amex: { ranges: [['34', '34'], ['37', '37']], length: 15, rule: 'an amex number starts with 34 or 37 and has 15 digits' },
  disc: { ranges: [['6011', '6011'], ['644', '649'], ['65', '65'], ['622126', '622925']], rule: 'a disc number starts with 6011, 644 to 649, 65 or 622126 to 622925' },
  dine: { ranges: [['300', '305'], ['36', '36'], ['38', '39']], rule: 'a dine number starts with 300 to 305, 36, 38 or 39' },
  jcb: { ranges: [['3528', '3589']], rule: 'a jcb number starts with 3528 to 3589' },
};

/** Undefined when the number's issuer prefix (and, for amex, its length) agrees with `cardType`; otherwise why not. */
export function cardBrandMismatch(cardType: (typeof CARD_TYPES)[number], accountNumber: string): string | undefined {
  const brand = CARD_BRANDS[cardType];
  const inRange = brand.ranges.some(([low, high]) => {
    const prefix = Number(accountNumber.slice(0, low.length));
    return prefix >= Number(low) && prefix <= Number(high);
  });
  return inRange && (brand.length === undefined || accountNumber.length === brand.length) ? undefined : `does not agree with the card number: ${brand.rule}`;
}
