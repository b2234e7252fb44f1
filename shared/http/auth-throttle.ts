import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { NotAuthenticated, Throttled } from '#shared/domain/errors.ts';

/**
 * The authorizer cannot answer 429 itself (a REQUEST authorizer allows, denies
 * or refuses), so for an attempt over a failed-authentication cap it allows
 * with `credentialKind: throttled` and the window's end; this answers 429
 * before the request is read any further. A cached answer can outlive its
 * window (the cache keys on the Authorization header and the address): past
 * it, the same credentials get 401, what they are, since only attempts
 * without valid credentials are ever throttled.
 */
export function failedAuthenticationThrottle<C extends Context>(): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, C> {
  return {
    before: (request) => {
      const context = request.event.requestContext?.authorizer as Record<string, unknown> | null | undefined;
      if (context?.credentialKind !== 'throttled') return;
      const until = Number(context.throttledUntil);
      const retryAfterSeconds = Math.ceil(until - Date.now() / 1000);
      if (!Number.isFinite(retryAfterSeconds) || retryAfterSeconds <= 0) throw new NotAuthenticated();
      throw new Throttled('too many failed authentication attempts from this address or for this access id; retry later', retryAfterSeconds);
    },
  };
}
