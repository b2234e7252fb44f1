import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { Throttled } from '#shared/domain/errors.ts';

/**
 * The authorizer cannot answer 429 itself (a REQUEST authorizer allows, denies
 * or refuses), so for an address over its failed-authentication budget it
 * allows with `credentialKind: throttled` and the window's end; this answers
 * 429 before the request is read any further. A cached answer can outlive its
 * window (the cache keys on the auth headers): it keeps answering 429 with the
 * shortest Retry-After until the cache entry expires.
 */
export function failedAuthenticationThrottle<C extends Context>(): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, C> {
  return {
    before: (request) => {
      const context = request.event.requestContext?.authorizer as Record<string, unknown> | null | undefined;
      if (context?.credentialKind !== 'throttled') return;
      const until = Number(context.throttledUntil);
      const retryAfterSeconds = Number.isFinite(until) ? Math.max(1, Math.ceil(until - Date.now() / 1000)) : 60;
      throw new Throttled('too many failed authentication attempts from this address; retry later', retryAfterSeconds);
    },
  };
}
