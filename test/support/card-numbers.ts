/** A number of `length` digits starting with `prefix` that passes the Luhn check (the last digit is the check digit). */
export function cardNumber(prefix: string, length = 16): string {
  return withLuhnDigit(prefix.padEnd(length - 1, '0'));
}

/** `body` with its Luhn check digit appended. */
export function withLuhnDigit(body: string): string {
  for (let check = 0; check <= 9; check += 1) {
    const candidate = `${body}${check}`;
    if (luhnSum(candidate) % 10 === 0) return candidate;
  }
  throw new Error('unreachable: one check digit always fits');
}

function luhnSum(digits: string): number {
  let sum = 0;
  for (let index = digits.length - 1, double = false; index >= 0; index -= 1, double = !double) {
    let digit = digits.charCodeAt(index) - 48;
    if (double) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum;
}
