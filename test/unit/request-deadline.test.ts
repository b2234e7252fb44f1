import { describe, expect, it } from 'vitest';
import { remainingMs, requestClockOf, requestDeadline, withRequestDeadline } from '#shared/runtime/deadline.ts';
import { ANSWER_MARGIN_MS, AUTHORIZER_BUDGET_MS, REQUEST_BUDGET_MS } from '#shared/platform/function-sizing.ts';

const NOW = 1_800_000_000_000;

describe('the request deadline', () => {
  it('counts from the request’s arrival, not from the invocation: time already spent comes out of it', () => {
    expect(requestDeadline({ arrivedAt: NOW, invocationRemainingMs: undefined }, NOW)).toBe(NOW + REQUEST_BUDGET_MS);
    expect(requestDeadline({ arrivedAt: NOW - 2_300, invocationRemainingMs: undefined }, NOW)).toBe(NOW - 2_300 + REQUEST_BUDGET_MS);
    expect(requestDeadline({ arrivedAt: NOW - 9_500, invocationRemainingMs: undefined }, NOW)).toBeLessThan(NOW);
  });

  it('caps the authorizer at its share, and never past the request’s', () => {
    expect(requestDeadline({ arrivedAt: NOW, invocationRemainingMs: undefined }, NOW, AUTHORIZER_BUDGET_MS)).toBe(NOW + AUTHORIZER_BUDGET_MS);
    expect(requestDeadline({ arrivedAt: NOW - 8_000, invocationRemainingMs: undefined }, NOW, AUTHORIZER_BUDGET_MS)).toBe(NOW - 8_000 + REQUEST_BUDGET_MS);
  });

  it('comes before the function’s own timeout, with room to answer', () => {
    expect(requestDeadline({ arrivedAt: NOW, invocationRemainingMs: 4_000 }, NOW)).toBe(NOW + 4_000 - ANSWER_MARGIN_MS);
  });

  it('takes a missing or future arrival (clock skew) as now', () => {
    expect(requestDeadline({ arrivedAt: undefined, invocationRemainingMs: undefined }, NOW)).toBe(NOW + REQUEST_BUDGET_MS);
    expect(requestDeadline({ arrivedAt: NOW + 60_000, invocationRemainingMs: undefined }, NOW)).toBe(NOW + REQUEST_BUDGET_MS);
    expect(requestDeadline({ arrivedAt: Number.NaN, invocationRemainingMs: undefined }, NOW)).toBe(NOW + REQUEST_BUDGET_MS);
  });

  it('reads the arrival from the event and the remaining time from the context', () => {
    expect(requestClockOf({ requestContext: { requestTimeEpoch: NOW } }, { getRemainingTimeInMillis: () => 11_000 })).toEqual({ arrivedAt: NOW, invocationRemainingMs: 11_000 });
    expect(requestClockOf({ requestContext: null }, undefined)).toEqual({ arrivedAt: undefined, invocationRemainingMs: undefined });
  });

  it('is what remainingMs reports inside the invocation', async () => {
    const arrivedAt = Date.now() - 8_000;
    await withRequestDeadline({ arrivedAt, invocationRemainingMs: undefined }, async () => {
      const left = remainingMs()!;
      expect(left).toBeLessThanOrEqual(REQUEST_BUDGET_MS - 8_000);
      expect(left).toBeGreaterThan(0);
    });
  });
});
