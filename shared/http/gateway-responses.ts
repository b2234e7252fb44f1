/**
 * Answers given before or instead of a handler: by API Gateway's gateway
 * responses in AWS and by the local runtime's emulator. One table, so the two
 * environments answer alike.
 */
import type { ResponseCode } from '#shared/platform/response-codes.ts';
import { statusOf } from '#shared/platform/response-codes.ts';

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
  code: ResponseCode;
  message: string;
  headers?: Readonly<Record<string, string>>;
}

/** A gateway answer: its status is its code's (shared/platform/response-codes.ts). */
function answer(code: ResponseCode, message: string, headers?: Readonly<Record<string, string>>): GatewayResponseSpec {
  return { statusCode: statusOf(code), code, message, ...(headers ? { headers } : {}) };
}

export const AUTH_REALM = 'payments';
export const RETRY_AFTER_SECONDS = '1';

export const GATEWAY_RESPONSES: Readonly<Record<GatewayResponseKind, GatewayResponseSpec>> = {
  UNAUTHORIZED: answer('UNAUTHORIZED', 'valid Basic credentials and X-Service-Auth-Organization-Id are required', { 'WWW-Authenticate': `Basic realm="${AUTH_REALM}"` }),
  ACCESS_DENIED: answer('FORBIDDEN', 'access denied'),
  // API Gateway answers a path it has no resource for with this type.
  MISSING_AUTHENTICATION_TOKEN: answer('NOT_FOUND', 'no such route'),
  RESOURCE_NOT_FOUND: answer('NOT_FOUND', 'no such route'),
  REQUEST_TOO_LARGE: answer(
    'PAYLOAD_TOO_LARGE',
    'request too large for a single request; upload large files through POST /v3/organizations/org_<id>/documents/uploads',
  ),
  THROTTLED: answer('THROTTLED', 'too many requests; retry later', { 'Retry-After': RETRY_AFTER_SECONDS }),
  UNSUPPORTED_MEDIA_TYPE: answer('UNSUPPORTED_MEDIA_TYPE', 'unsupported Content-Type'),
  BAD_REQUEST_BODY: answer('INVALID_REQUEST', 'invalid request body'),
  INTEGRATION_TIMEOUT: answer('SERVICE_UNAVAILABLE', 'the request timed out; retry later', { 'Retry-After': RETRY_AFTER_SECONDS }),
  INTEGRATION_FAILURE: answer('SERVICE_UNAVAILABLE', 'the service is temporarily unavailable; retry later', { 'Retry-After': RETRY_AFTER_SECONDS }),
  AUTHORIZER_FAILURE: answer('SERVICE_UNAVAILABLE', 'authentication is temporarily unavailable; retry later', { 'Retry-After': RETRY_AFTER_SECONDS }),
  AUTHORIZER_CONFIGURATION_ERROR: answer('SERVICE_UNAVAILABLE', 'authentication is temporarily unavailable; retry later', { 'Retry-After': RETRY_AFTER_SECONDS }),
  DEFAULT_4XX: answer('INVALID_REQUEST', 'invalid request'),
  DEFAULT_5XX: answer('INTERNAL_ERROR', 'internal error'),
};

/** The 405 answer for a known path, given by a mock integration in AWS and by the emulator locally. */
export const METHOD_NOT_ALLOWED = answer('METHOD_NOT_ALLOWED', 'method not allowed on this path');
