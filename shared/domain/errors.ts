/**
 * Typed domain errors. They carry no HTTP: shared/http/errors.ts is the one
 * place that turns them into statuses and the contract's error envelope. Each
 * carries a code from the catalogue (shared/platform/response-codes.ts), typed so that a
 * class only takes the codes of its own kind.
 */
import type { CodeOfKind, ErrorKind, ResponseCode } from '#shared/platform/response-codes.ts';

export interface FieldIssue {
  /** Dotted path of the failing member, e.g. `card.account_number`; empty for the whole body. */
  field: string;
  message: string;
}

export abstract class DomainError extends Error {
  abstract readonly kind: DomainErrorKind;
  /** Stable UPPER_SNAKE code shown to clients as `response_code`. */
  readonly code: ResponseCode;
  readonly issues: readonly FieldIssue[];

  constructor(code: ResponseCode, message: string, issues: readonly FieldIssue[] = []) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.issues = issues;
  }
}

/** The catalogue's kinds a use case can raise: 405 and 500 come from routing and from bugs, never from the domain. */
export type DomainErrorKind = Exclude<ErrorKind, 'method-not-allowed' | 'internal'>;

/** The request is malformed or a field breaks a rule; `issues` lists every failing field. */
export class InvalidRequest extends DomainError {
  readonly kind = 'invalid' as const;
  constructor(issues: readonly FieldIssue[], code: CodeOfKind<'invalid'> = 'VALIDATION_ERROR') {
    super(code, issues.map((issue) => formatIssue(issue)).join('; ') || 'invalid request', issues);
  }
}

export class NotAuthenticated extends DomainError {
  readonly kind = 'unauthenticated' as const;
  constructor(message = 'valid credentials are required') {
    super('UNAUTHORIZED', message);
  }
}

export class AccessDenied extends DomainError {
  readonly kind = 'forbidden' as const;
  constructor(message = 'the authenticated organization may not access this organization') {
    super('FORBIDDEN', message);
  }
}

export class NotFound extends DomainError {
  readonly kind = 'not-found' as const;
  constructor(message = 'resource not found') {
    super('NOT_FOUND', message);
  }
}

export class Conflict extends DomainError {
  readonly kind = 'conflict' as const;
  constructor(
    code: CodeOfKind<'conflict'>,
    message: string,
    issues: readonly FieldIssue[] = [],
    /** Set when the conflict passes by itself (a scan still running): when to ask again. */
    readonly retryAfterSeconds?: number,
  ) {
    super(code, message, issues);
  }
}

export class TooLarge extends DomainError {
  readonly kind = 'too-large' as const;
  constructor(message: string, code: CodeOfKind<'too-large'> = 'PAYLOAD_TOO_LARGE') {
    super(code, message);
  }
}

export class UnsupportedMediaType extends DomainError {
  readonly kind = 'unsupported-media-type' as const;
  constructor(message: string) {
    super('UNSUPPORTED_MEDIA_TYPE', message);
  }
}

export class Unprocessable extends DomainError {
  readonly kind = 'unprocessable' as const;
  constructor(code: CodeOfKind<'unprocessable'>, message: string) {
    super(code, message);
  }
}

/** The caller spent its request budget; it may retry after `retryAfterSeconds`. */
export class Throttled extends DomainError {
  readonly kind = 'throttled' as const;
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('THROTTLED', message);
  }
}

/** A dependency (DynamoDB, S3, KMS, PayPal) cannot serve now; the client should retry later. */
export class Unavailable extends DomainError {
  readonly kind = 'unavailable' as const;
  constructor(
    message = 'a dependency is temporarily unavailable; retry later',
    readonly retryAfterSeconds = 1,
    options?: { cause?: unknown; code?: CodeOfKind<'unavailable'> },
  ) {
    super(options?.code ?? 'SERVICE_UNAVAILABLE', message);
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/**
 * A write was sent but its outcome is unknown: the dependency stalled or the
 * connection dropped after the request left, so it may or may not have been
 * applied. Retrying with the same Idempotency-Key is safe (it answers with the
 * committed record or performs the write once); retrying without one may duplicate.
 */
export class OutcomeUnknown extends Unavailable {
  constructor(options?: { cause?: unknown }) {
    super('the outcome of the write is unknown; retry with the same Idempotency-Key to learn it (without one, a retry may create a duplicate)', 1, {
      ...options,
      code: 'OUTCOME_UNKNOWN',
    });
  }
}

export function formatIssue(issue: FieldIssue): string {
  return issue.field ? `${issue.field} ${issue.message}` : issue.message;
}
