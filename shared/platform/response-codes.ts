/**
 * The catalogue of `response_code` values: the one place each code is named,
 * with its kind of error, the HTTP status that kind answers with, what it means
 * and where it surfaces. Code that raises an error names its code through the
 * `ResponseCode` type (a typo does not compile, and an error class only takes
 * the codes of its kind); shared/http maps a code to its status from here; the
 * OpenAPI document lists each status's codes from here; and `npm run openapi`
 * writes docs/error-codes.md from here (a unit test fails while it is stale).
 *
 * Imports nothing, so the domain, the HTTP layer, the stack and the local
 * runtime can all read it.
 */

/** Kinds of error, each answered with one HTTP status. */
export type ErrorKind =
  | 'invalid'
  | 'unauthenticated'
  | 'forbidden'
  | 'not-found'
  | 'method-not-allowed'
  | 'conflict'
  | 'too-large'
  | 'unsupported-media-type'
  | 'unprocessable'
  | 'throttled'
  | 'internal'
  | 'unavailable';

export const STATUS_OF_KIND = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  'not-found': 404,
  'method-not-allowed': 405,
  conflict: 409,
  'too-large': 413,
  'unsupported-media-type': 415,
  unprocessable: 422,
  throttled: 429,
  internal: 500,
  unavailable: 503,
} as const satisfies Record<ErrorKind, number>;

export type ErrorStatus = (typeof STATUS_OF_KIND)[ErrorKind];

/**
 * Where a code surfaces: `api`, in an HTTP answer's error envelope; `cli`, only
 * in the JSON error the command-line tools print (`{"error": CODE, ...}`);
 * `account-updater`, as the reason a whole Account Updater file is refused (in
 * its summary, and printed by `au:apply`).
 */
export type CodeSurface = 'api' | 'cli' | 'account-updater';

/**
 * Each code's kind, which decides its status: what the running code needs.
 * (Kept apart from the texts below so that a function bundle carries only this
 * table: esbuild drops CODE_DETAILS where nothing reads it.)
 */
export const KIND_OF_CODE = {
  // 400
  VALIDATION_ERROR: 'invalid',
  INVALID_JSON: 'invalid',
  INVALID_QUERY: 'invalid',
  INVALID_CURSOR: 'invalid',
  INVALID_MULTIPART: 'invalid',
  INVALID_IDEMPOTENCY_KEY: 'invalid',
  INVALID_ONE_TIME_TOKEN: 'invalid',
  VENDOR_REFUSED: 'invalid',
  INVALID_REQUEST: 'invalid',
  INVALID_WEBHOOK_URL: 'invalid',
  // 401, 403, 404, 405
  UNAUTHORIZED: 'unauthenticated',
  FORBIDDEN: 'forbidden',
  NOT_FOUND: 'not-found',
  METHOD_NOT_ALLOWED: 'method-not-allowed',
  // 409
  IDEMPOTENCY_KEY_IN_USE: 'conflict',
  ONE_TIME_TOKEN_USED: 'conflict',
  DUPLICATE_PAYMETHOD: 'conflict',
  CONCURRENT_MODIFICATION: 'conflict',
  DOCUMENT_NOT_AVAILABLE: 'conflict',
  DUPLICATE_DOCUMENT: 'conflict',
  SCAN_PENDING: 'conflict',
  DOCUMENT_INFECTED: 'conflict',
  SCAN_FAILED: 'conflict',
  RETENTION_ACTIVE: 'conflict',
  ENDPOINT_LIMIT: 'conflict',
  // 413, 415, 422, 429
  PAYLOAD_TOO_LARGE: 'too-large',
  FILE_TOO_LARGE: 'too-large',
  HEADERS_TOO_LARGE: 'too-large',
  UNSUPPORTED_MEDIA_TYPE: 'unsupported-media-type',
  IDEMPOTENCY_KEY_REUSED: 'unprocessable',
  THROTTLED: 'throttled',
  // 500, 503
  INTERNAL_ERROR: 'internal',
  SERVICE_UNAVAILABLE: 'unavailable',
  OUTCOME_UNKNOWN: 'unavailable',
  // Command-line tools
  ORGANIZATION_EXISTS: 'conflict',
  CREDENTIAL_EXISTS: 'conflict',
  PUBLISHABLE_KEY_EXISTS: 'conflict',
  // Account Updater files refused as a whole
  EMPTY_FILE: 'invalid',
  BAD_HEADER: 'invalid',
  BAD_ENCODING: 'invalid',
  MALFORMED_CSV: 'invalid',
} as const satisfies Record<string, ErrorKind>;

export type ResponseCode = keyof typeof KIND_OF_CODE;

/** Where each code surfaces and what it means: for the documentation (docs/error-codes.md, the OpenAPI document). */
export const CODE_DETAILS: Readonly<Record<ResponseCode, { readonly surface: CodeSurface; readonly meaning: string }>> = {
  // 400
  VALIDATION_ERROR: {
    surface: 'api',
    meaning: 'A body member (or the JSON part of an upload) is missing, invalid or unknown; `errors` names every failing field.',
  },
  INVALID_JSON: {
    surface: 'api',
    meaning: 'The body is missing, not UTF-8, not JSON, not a JSON object, or nested deeper than 32 levels.',
  },
  INVALID_QUERY: {
    surface: 'api',
    meaning: 'A query parameter or filter term is unknown, repeated, malformed or out of range (page_size, page_index, dates), or holds U+0000, U+FFFD (bytes that were not UTF-8) or an unpaired surrogate; or a cursor is not of the form this service issues.',
  },
  INVALID_CURSOR: {
    surface: 'api',
    meaning: 'The `cursor` parameter is not one this service issued for this list request (its path, filters, page_index and page_size): follow `links.next` as given.',
  },
  INVALID_MULTIPART: {
    surface: 'api',
    meaning: 'The multipart body is malformed: boundary, parts, their order or names, the filename, or the JSON part is not a JSON object.',
  },
  INVALID_IDEMPOTENCY_KEY: {
    surface: 'api',
    meaning: 'The Idempotency-Key header is not 1 to 255 characters.',
  },
  INVALID_ONE_TIME_TOKEN: {
    surface: 'api',
    meaning: 'The one-time token is unknown, expired, or was minted for another organization or location.',
  },
  VENDOR_REFUSED: {
    surface: 'api',
    meaning: 'PayPal refused the billing agreement token.',
  },
  INVALID_WEBHOOK_URL: {
    surface: 'api',
    meaning: 'A webhook endpoint URL breaks the rules: not https, longer than 2,048 characters, with a user or password, or a host that is or resolves to a loopback, private, link-local, multicast or otherwise non-public address (docs/webhooks.md).',
  },
  INVALID_REQUEST: {
    surface: 'api',
    meaning: 'API Gateway refused the request before the service saw it (a malformed HTTP request or a body it could not map).',
  },
  // 401, 403, 404, 405
  UNAUTHORIZED: {
    surface: 'api',
    meaning: 'Credentials or X-Service-Auth-Organization-Id are missing, malformed, wrong, revoked, or of another organization; a publishable key on a route that does not take one.',
  },
  FORBIDDEN: {
    surface: 'api',
    meaning: 'The caller may not act on this organization (neither its own nor a direct child); a publishable key outside its organization, location or allowed origins.',
  },
  NOT_FOUND: {
    surface: 'api',
    meaning: 'No such route, or no such record here (it may belong to another organization, location or customer), or a path segment without its prefix.',
  },
  METHOD_NOT_ALLOWED: {
    surface: 'api',
    meaning: 'The path exists but not with this method; `Allow` lists the methods it takes.',
  },
  // 409
  IDEMPOTENCY_KEY_IN_USE: {
    surface: 'api',
    meaning: 'A request with the same Idempotency-Key is still being processed; retry later to get its answer.',
  },
  ONE_TIME_TOKEN_USED: {
    surface: 'api',
    meaning: 'The one-time token was already consumed by another paymethod.',
  },
  ENDPOINT_LIMIT: {
    surface: 'api',
    meaning: 'The organization already has 16 webhook endpoints; delete one before adding another.',
  },
  DUPLICATE_PAYMETHOD: {
    surface: 'api',
    meaning: 'With fail_on_duplicate, the customer (or the location, for a paymethod without a customer) already has this card or echeck: `errors` names the account number, `response_desc` the existing paymethod_token; nothing was created.',
  },
  CONCURRENT_MODIFICATION: {
    surface: 'api',
    meaning: 'The paymethod or its customer was changed by another request at the same moment; retry.',
  },
  DOCUMENT_NOT_AVAILABLE: {
    surface: 'api',
    meaning: 'The document has no stored file to download (an upload session still pending, or rejected).',
  },
  DUPLICATE_DOCUMENT: {
    surface: 'api',
    meaning: 'The file has the same bytes (SHA-256) as an existing document of the organization for the same resource_id: `errors` names `file`, `response_desc` the existing doc_ id; nothing was stored.',
  },
  SCAN_PENDING: {
    surface: 'api',
    meaning: 'The file is still being scanned for malware; retry the download after `Retry-After` seconds.',
  },
  DOCUMENT_INFECTED: {
    surface: 'api',
    meaning: 'The malware scan found the file infected: its bytes were removed and are never served; the record stays as evidence.',
  },
  SCAN_FAILED: {
    surface: 'api',
    meaning: 'The malware scan could not decide (for example a password-protected or oversized file); the file is not served.',
  },
  RETENTION_ACTIVE: {
    surface: 'api',
    meaning: 'The document is on legal hold or its `retain_until` date has not passed: it cannot be deleted; nothing was removed.',
  },
  // 413, 415, 422, 429
  PAYLOAD_TOO_LARGE: {
    surface: 'api',
    meaning: "The request body is over the route's limit or the single-request cap (6 MB with base64); large files go through an upload session.",
  },
  FILE_TOO_LARGE: {
    surface: 'api',
    meaning: 'The uploaded file is over 8,000,000 bytes (refused while streaming).',
  },
  HEADERS_TOO_LARGE: {
    surface: 'api',
    meaning: "The request headers exceed API Gateway's 10,240 bytes.",
  },
  UNSUPPORTED_MEDIA_TYPE: {
    surface: 'api',
    meaning: 'The Content-Type is not the one the route takes, or names a charset other than utf-8.',
  },
  IDEMPOTENCY_KEY_REUSED: {
    surface: 'api',
    meaning: 'The Idempotency-Key was already used with another request (another route, path or body).',
  },
  THROTTLED: {
    surface: 'api',
    meaning: "Too many requests: the stage's throttle, a publishable key's minting budget, or failed authentications from this address or naming this access id; wait `Retry-After` seconds.",
  },
  // 500, 503
  INTERNAL_ERROR: {
    surface: 'api',
    meaning: 'An unexpected failure; the answer carries no details (they are in the logs under X-Request-Id).',
  },
  SERVICE_UNAVAILABLE: {
    surface: 'api',
    meaning: 'A dependency (DynamoDB, S3, KMS, PayPal, the authorizer) is unavailable or timed out and nothing was written; retry after `Retry-After` seconds.',
  },
  OUTCOME_UNKNOWN: {
    surface: 'api',
    meaning: 'A write was sent but its outcome is unknown; retry with the same Idempotency-Key to get the committed record (without one, a retry may create a duplicate).',
  },
  // Command-line tools
  ORGANIZATION_EXISTS: {
    surface: 'cli',
    meaning: '`admin create-organization`: the organization is already registered.',
  },
  CREDENTIAL_EXISTS: {
    surface: 'cli',
    meaning: '`admin create-credentials`: the generated access id is already in use (retry).',
  },
  PUBLISHABLE_KEY_EXISTS: {
    surface: 'cli',
    meaning: '`admin create-publishable-key`: the generated key is already in use (retry).',
  },
  // Account Updater files refused as a whole
  EMPTY_FILE: {
    surface: 'account-updater',
    meaning: 'The file is empty: it must start with the header line.',
  },
  BAD_HEADER: {
    surface: 'account-updater',
    meaning: 'The first line is not exactly `paymethod_token,au_code,account_number,expire_month,expire_year`.',
  },
  BAD_ENCODING: {
    surface: 'account-updater',
    meaning: 'The file is not valid UTF-8.',
  },
  MALFORMED_CSV: {
    surface: 'account-updater',
    meaning: 'The CSV cannot be read (broken quoting, an over-long record); nothing was applied.',
  },
};

/** The codes of one kind: what an error class of that kind may carry. */
export type CodeOfKind<Kind extends ErrorKind> = {
  [Code in ResponseCode]: (typeof KIND_OF_CODE)[Code] extends Kind ? Code : never;
}[ResponseCode];

export function statusOf(code: ResponseCode): ErrorStatus {
  return STATUS_OF_KIND[KIND_OF_CODE[code]];
}

export function isResponseCode(value: string): value is ResponseCode {
  return Object.hasOwn(KIND_OF_CODE, value);
}

/** `value` as a code of `kind`, or undefined (for codes read back from a stored summary). */
export function codeOfKind<Kind extends ErrorKind>(value: string, kind: Kind): CodeOfKind<Kind> | undefined {
  return isResponseCode(value) && KIND_OF_CODE[value] === kind ? (value as CodeOfKind<Kind>) : undefined;
}

/** Every code, in catalogue order. */
export const ALL_RESPONSE_CODES = Object.keys(KIND_OF_CODE) as ResponseCode[];
