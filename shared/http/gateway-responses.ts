/**
 * Answers given before or instead of a handler: by API Gateway's gateway
 * responses in AWS and by the local runtime's emulator. One table, so the two
 * environments answer alike.
 */

export type GatewayResponseKind =
  | 'UNAUTHORIZED'
  | 'ACCESS_DENIED'
  | 'MISSING_AUTHENTICATION_TOKEN'
  | 'RESOURCE_NOT_FOUND'
  | 'REQUEST_TOO_LARGE'
  | 'THROTTLED'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'BAD_REQUEST_BODY'
  | 'INTEGRATION_TIMEOUT'
  | 'INTEGRATION_FAILURE'
  | 'AUTHORIZER_FAILURE'
  | 'AUTHORIZER_CONFIGURATION_ERROR'
  | 'DEFAULT_4XX'
  | 'DEFAULT_5XX';

export interface GatewayResponseSpec {
  statusCode: number;
  code: string;
  message: string;
  headers?: Readonly<Record<string, string>>;
}

export const AUTH_REALM = 'payments';
export const RETRY_AFTER_SECONDS = '1';

export const GATEWAY_RESPONSES: Readonly<Record<GatewayResponseKind, GatewayResponseSpec>> = {
  UNAUTHORIZED: {
    statusCode: 401,
    code: 'UNAUTHORIZED',
    message: 'valid Basic credentials and X-Service-Auth-Organization-Id are required',
    headers: { 'WWW-Authenticate': `Basic realm="${AUTH_REALM}"` },
  },
  ACCESS_DENIED: { statusCode: 403, code: 'FORBIDDEN', message: 'access denied' },
  // API Gateway answers a path it has no resource for with this type.
  MISSING_AUTHENTICATION_TOKEN: { statusCode: 404, code: 'NOT_FOUND', message: 'no such route' },
  RESOURCE_NOT_FOUND: { statusCode: 404, code: 'NOT_FOUND', message: 'no such route' },
  REQUEST_TOO_LARGE: {
    statusCode: 413,
    code: 'PAYLOAD_TOO_LARGE',
    message:
      'request too large for a single request; upload large files through POST /v3/organizations/org_<id>/documents/uploads',
  },
  THROTTLED: { statusCode: 429, code: 'THROTTLED', message: 'too many requests; retry later', headers: { 'Retry-After': RETRY_AFTER_SECONDS } },
  UNSUPPORTED_MEDIA_TYPE: { statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'unsupported Content-Type' },
  BAD_REQUEST_BODY: { statusCode: 400, code: 'INVALID_REQUEST', message: 'invalid request body' },
  INTEGRATION_TIMEOUT: {
    statusCode: 503,
    code: 'SERVICE_UNAVAILABLE',
    message: 'the request timed out; retry later',
    headers: { 'Retry-After': RETRY_AFTER_SECONDS },
  },
  INTEGRATION_FAILURE: {
    statusCode: 503,
    code: 'SERVICE_UNAVAILABLE',
    message: 'the service is temporarily unavailable; retry later',
    headers: { 'Retry-After': RETRY_AFTER_SECONDS },
  },
  AUTHORIZER_FAILURE: {
    statusCode: 503,
    code: 'SERVICE_UNAVAILABLE',
    message: 'authentication is temporarily unavailable; retry later',
    headers: { 'Retry-After': RETRY_AFTER_SECONDS },
  },
  AUTHORIZER_CONFIGURATION_ERROR: {
    statusCode: 503,
    code: 'SERVICE_UNAVAILABLE',
    message: 'authentication is temporarily unavailable; retry later',
    headers: { 'Retry-After': RETRY_AFTER_SECONDS },
  },
  DEFAULT_4XX: { statusCode: 400, code: 'INVALID_REQUEST', message: 'invalid request' },
  DEFAULT_5XX: { statusCode: 500, code: 'INTERNAL_ERROR', message: 'internal error' },
};

/** The 405 answer for a known path, given by a mock integration in AWS and by the emulator locally. */
export const METHOD_NOT_ALLOWED = { statusCode: 405, code: 'METHOD_NOT_ALLOWED', message: 'method not allowed on this path' } as const;
