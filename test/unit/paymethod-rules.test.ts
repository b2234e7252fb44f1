import { describe, expect, it } from 'vitest';
import { codePointLength, isExpiryCurrentOrFuture, isValidRoutingNumber, masked, passesAbaChecksum, passesLuhn } from '#shared/domain/paymethods/rules.ts';

describe('paymethod field rules', () => {
  it('checks Luhn', () => {
    for (const number of ['4111111111111111', '5555555555554444', '378282246310005', '6011111111111117', '4012888888881881']) expect(passesLuhn(number)).toBe(true);
    for (const number of ['4111111111111112', '1234567890123', '41111111111111a1', '']) expect(passesLuhn(number)).toBe(false);
  });

  it('checks the ABA checksum and accepts the Canadian 0AAABBBBB form', () => {
    expect(passesAbaChecksum('011000015')).toBe(true);
    expect(passesAbaChecksum('021000021')).toBe(true);
    expect(passesAbaChecksum('123456789')).toBe(false);
    expect(isValidRoutingNumber('123456789')).toBe(false);
    expect(isValidRoutingNumber('000112345')).toBe(true); // Canadian: institution 001, branch 12345
    expect(isValidRoutingNumber('12345678')).toBe(false);
  });

  it('counts code points, not UTF-16 units', () => {
    expect(codePointLength('😀'.repeat(50))).toBe(50);
    expect('😀'.repeat(50).length).toBe(100);
  });

  it('accepts the current UTC month and later, refuses earlier ones', () => {
    const now = new Date('2026-03-31T23:59:59Z');
    expect(isExpiryCurrentOrFuture(3, 2026, now)).toBe(true);
    expect(isExpiryCurrentOrFuture(2, 2026, now)).toBe(false);
    expect(isExpiryCurrentOrFuture(1, 2027, now)).toBe(true);
    expect(isExpiryCurrentOrFuture(12, 2025, now)).toBe(false);
  });

  it('masks with four asterisks and the last four digits', () => {
    expect(masked('4111111111111111')).toBe('****1111');
  });
});
