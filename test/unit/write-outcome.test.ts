import { describe, expect, it } from 'vitest';
import { DeadlineExceeded, remainingMs, withRequestDeadline } from '#shared/runtime/deadline.ts';
import { EARLIER_ATTEMPT_MAY_HAVE_APPLIED, commitWrite, mayHaveBeenApplied } from '#shared/runtime/outcome.ts';
import { OutcomeUnknown } from '#shared/domain/errors.ts';
import { classifyError, errorResponse } from '#shared/http/errors.ts';

const sdkError = (name: string, status?: number, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(name), { name, ...(status === undefined ? {} : { $metadata: { httpStatusCode: status } }), ...extra });

describe('whether a failed write may have been applied', () => {
  it.each([
    ['a refusal the service answered (throttled, 400)', sdkError('ProvisionedThroughputExceededException', 400)],
    ['a failed condition', sdkError('ConditionalCheckFailedException', 400)],
    ['a connection that never opened', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })],
    ['a connect timeout', Object.assign(new Error('the request socket did not establish a connection with the server within 1000 ms'), { name: 'TimeoutError' })],
    ['the deadline before the call started', new DeadlineExceeded(false, 'DynamoDB')],
  ])('not applied: %s', (_name, error) => {
    expect(mayHaveBeenApplied(error)).toBe(false);
  });

  it.each([
    ['silence after sending', Object.assign(new Error('the request socket timed out after 2000 ms of inactivity'), { name: 'TimeoutError' })],
    ['a reset connection', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })],
    ['a 5xx', sdkError('InternalServerError', 500)],
    ['the deadline while waiting', new DeadlineExceeded(true, 'DynamoDB')],
    ['a refusal after an attempt that may have landed', sdkError('TransactionCanceledException', 400, { [EARLIER_ATTEMPT_MAY_HAVE_APPLIED]: true })],
    ['a refusal after a retry, from a client that cannot tell', sdkError('ThrottlingException', 400, { $metadata: { httpStatusCode: 400, attempts: 2 } })],
  ])('unknown: %s', (_name, error) => {
    expect(mayHaveBeenApplied(error)).toBe(true);
  });

  it('commitWrite answers an unknown outcome as 503 OUTCOME_UNKNOWN with Retry-After, and passes refusals through', async () => {
    const unknown = await commitWrite(() => Promise.reject(sdkError('InternalServerError', 500))).catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(OutcomeUnknown);
    const answer = errorResponse(classifyError(unknown)!);
    expect([answer.statusCode, answer.headers?.['Retry-After'], (answer.body as { response: { response_code: string } }).response.response_code]).toEqual([503, '1', 'OUTCOME_UNKNOWN']);
    const refused = sdkError('ConditionalCheckFailedException', 400);
    await expect(commitWrite(() => Promise.reject(refused))).rejects.toBe(refused);
  });
});

describe('the request deadline', () => {
  it('is known inside a request only, and counts down', async () => {
    expect(remainingMs()).toBeUndefined();
    await withRequestDeadline({ arrivedAt: undefined, invocationRemainingMs: undefined }, async () => {
      const left = remainingMs()!;
      expect(left).toBeGreaterThan(0);
      expect(left).toBeLessThanOrEqual(5_000);
    }, 5_000);
  });
});
