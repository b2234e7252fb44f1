import { OutcomeUnknown } from '#shared/domain/errors.ts';
import { DeadlineExceeded } from './deadline.ts';

/** Errors that prove the service refused the request, so it was not applied. */
const REFUSED = new Set([
  'ConditionalCheckFailedException',
  'TransactionCanceledException',
  'ValidationException',
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TransactionInProgressException',
  'ResourceNotFoundException',
  'AccessDeniedException',
  'SlowDown',
]);
/** Network errors raised before a request could leave. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/** Set by the client middleware (client-config.ts) on an error whose earlier attempt may have been applied. */
export const EARLIER_ATTEMPT_MAY_HAVE_APPLIED = '$earlierAttemptMayHaveApplied';

/**
 * Whether a failed write may still have been applied. Only a refusal the
 * service itself answered (a 4xx, a condition that failed) or a connection
 * that never opened proves it was not; a timeout after sending, a dropped
 * connection, a 5xx (DynamoDB documents InternalServerError as "may have
 * succeeded") or the deadline passing mid-call all leave it unknown. So does
 * any attempt before a retry that could have landed.
 */
export function mayHaveBeenApplied(error: unknown): boolean {
  if (!(error instanceof Error)) return true;
  const earlier = (error as { [EARLIER_ATTEMPT_MAY_HAVE_APPLIED]?: boolean })[EARLIER_ATTEMPT_MAY_HAVE_APPLIED];
  // A client without the middleware cannot tell: after a retry, assume the worst.
  if (earlier === undefined && ((error as { $metadata?: { attempts?: number } }).$metadata?.attempts ?? 1) > 1) return true;
  return earlier === true || attemptMayHaveBeenApplied(error);
}

/** The same question for one attempt's error. */
export function attemptMayHaveBeenApplied(error: Error): boolean {
  if (error instanceof DeadlineExceeded) return error.requestSent;
  if (REFUSED.has(error.name)) return false;
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return false;
  const code = (error as { code?: string }).code;
  if (code !== undefined && NOT_CONNECTED.has(code)) return false;
  if (error.name === 'TimeoutError' && /did not establish a connection/.test(error.message)) return false;
  return true;
}

/**
 * Runs the write that commits a new record (its commit point). A failure that
 * may have been applied becomes OutcomeUnknown (503 OUTCOME_UNKNOWN); anything
 * else is rethrown unchanged for the caller to interpret.
 */
export async function commitWrite<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (mayHaveBeenApplied(error)) throw new OutcomeUnknown({ cause: error });
    throw error;
  }
}
