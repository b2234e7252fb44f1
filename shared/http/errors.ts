import type { DomainError } from '#shared/domain/errors.ts';
import { Conflict, DomainError as DomainErrorClass, Throttled, Unavailable } from '#shared/domain/errors.ts';
import { statusOf } from '#shared/platform/response-codes.ts';
import { errorEnvelope } from './envelope.ts';
import { AUTH_REALM } from './gateway-responses.ts';
import type { ApiResponse } from './response.ts';

/** AWS SDK error names that mean "try again later", not "this request is wrong". */
const TRANSIENT_DEPENDENCY_ERRORS = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'InternalServerException',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'KMSInternalException',
  'DependencyTimeoutException',
  'KeyUnavailableException',
  'SlowDown',
  'TimeoutError',
  'RequestTimeout',
  'TransactionInProgressException',
  'RequestDeadlineExceeded',
  // A transaction cancelled by a concurrent one (repositories handle their own conditions).
  'TransactionCanceledException',
]);

const NETWORK_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/** Turns any error a handler throws into a domain error, or undefined for a bug. */
export function classifyError(error: unknown): DomainError | undefined {
  if (error instanceof DomainErrorClass) return error;
  if (isTransientDependencyError(error)) return new Unavailable(undefined, 1, { cause: error });
  return undefined;
}

export function isTransientDependencyError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  const code = (error as { code?: string }).code;
  return (
    TRANSIENT_DEPENDENCY_ERRORS.has(error.name) ||
    (typeof status === 'number' && status >= 500) ||
    (code !== undefined && NETWORK_ERROR_CODES.has(code))
  );
}

export function errorResponse(error: DomainError): ApiResponse {
  const headers: Record<string, string> = {};
  if (error instanceof Unavailable || error instanceof Throttled) headers['Retry-After'] = String(error.retryAfterSeconds);
  if (error instanceof Conflict && error.retryAfterSeconds !== undefined) headers['Retry-After'] = String(error.retryAfterSeconds);
  if (error.kind === 'unauthenticated') headers['WWW-Authenticate'] = `Basic realm="${AUTH_REALM}"`;
  return { statusCode: statusOf(error.code), headers, body: errorEnvelope(error.code, error.message, error.issues) };
}

export function internalErrorResponse(): ApiResponse {
  return { statusCode: statusOf('INTERNAL_ERROR'), body: errorEnvelope('INTERNAL_ERROR', 'internal error') };
}
