import { describe, expect, it } from 'vitest';
import { InvalidRequest, Unavailable } from '#shared/domain/errors.ts';
import { errorEnvelope } from '#shared/http/envelope.ts';
import { classifyError, errorResponse } from '#shared/http/errors.ts';
import { parseJsonObject } from '#shared/http/hostile-input.ts';
import { REDACTED, redactingReplacer } from '#shared/log/redact.ts';

describe('error envelope', () => {
  it('joins every failing field in the Error[n] form and lists them', () => {
    const envelope = errorEnvelope('VALIDATION_ERROR', 'ignored', [
      { field: 'card.account_number', message: 'must contain digits only' },
      { field: 'label', message: 'must be at most 50 characters' },
    ]);
    expect(envelope.response.response_desc).toBe('Error[1]: card.account_number must contain digits only Error[2]: label must be at most 50 characters');
    expect(envelope.response.errors).toEqual([
      { field: 'card.account_number', message: 'must contain digits only' },
      { field: 'label', message: 'must be at most 50 characters' },
    ]);
  });

  it('maps domain errors to statuses, with Retry-After on 503', () => {
    expect(errorResponse(new InvalidRequest([{ field: 'a', message: 'b' }])).statusCode).toBe(400);
    const unavailable = errorResponse(new Unavailable());
    expect(unavailable.statusCode).toBe(503);
    expect(unavailable.headers).toMatchObject({ 'Retry-After': '1' });
  });

  it('treats throttling and 5xx from AWS as unavailable, and anything else as a bug', () => {
    const throttled = Object.assign(new Error('slow down'), { name: 'ProvisionedThroughputExceededException' });
    const serverError = Object.assign(new Error('boom'), { name: 'Whatever', $metadata: { httpStatusCode: 500 } });
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(classifyError(throttled)?.kind).toBe('unavailable');
    expect(classifyError(serverError)?.kind).toBe('unavailable');
    expect(classifyError(refused)?.kind).toBe('unavailable');
    expect(classifyError(new TypeError('x is undefined'))).toBeUndefined();
  });
});

describe('JSON bodies', () => {
  it('drops null members at every depth but keeps arrays as they are', () => {
    expect(parseJsonObject('{"a": null, "b": {"c": null, "d": 1}, "e": [null, 1, {"f": null}]}', 'INVALID_JSON')).toEqual({ b: { d: 1 }, e: [null, 1, {}] });
  });
});

describe('log redaction', () => {
  const serialize = (value: unknown) => JSON.stringify(value, redactingReplacer);

  it('removes secret members by name at any depth', () => {
    const line = serialize({ card: { account_number: '4111111111111111', card_verification_value: '123' }, echeck: { account_number: '1234567' }, headers: { Authorization: 'Basic abc' }, api_secure_key: 'sk_1' });
    expect(line).not.toMatch(/4111111111111111|"123"|1234567|Basic abc|sk_1/);
    expect(line).toContain(REDACTED);
  });

  it('masks card numbers and Basic credentials inside free text', () => {
    const line = serialize({ message: 'failed for 4111 1111 1111 1111 with Basic bWU6a2V5', error: 'card 5500-0000-0000-0004 declined' });
    expect(line).not.toMatch(/4111 1111|5500-0000|bWU6a2V5/);
  });

  it('leaves identifiers that are not card numbers alone', () => {
    const line = serialize({ function_arn: 'arn:aws:lambda:us-east-1:000000000000:function:x', message: 'order 123456789012 failed' });
    expect(line).toContain('000000000000');
    expect(line).toContain('123456789012');
  });
});
