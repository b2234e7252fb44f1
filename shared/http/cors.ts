import type { APIGatewayProxyEvent } from 'aws-lambda';
import { normalizeOrigin } from '#shared/domain/publishable-keys.ts';
import { ORGANIZATION_HEADERS } from './organization-headers.ts';

/**
 * CORS for browser minting. Preflights (OPTIONS, no credentials) are answered by
 * functions/onetimetokens-preflight.ts for origins some publishable key of the
 * path's location allows; the actual request is answered with CORS headers only
 * when its own publishable key allows its Origin. The origin is echoed, never `*`,
 * and no credentials mode is offered (the key travels in a header, not a cookie).
 */
export const PREFLIGHT_ALLOWED_METHODS = 'POST';
export const PREFLIGHT_ALLOWED_HEADERS = ['Authorization', 'Content-Type', ...ORGANIZATION_HEADERS, 'Idempotency-Key'].join(', ');
/** Browsers cap this (Chromium at 2 hours); 10 minutes keeps a removed origin from lingering. */
export const PREFLIGHT_MAX_AGE_SECONDS = 600;
export const EXPOSED_HEADERS = 'X-Request-Id, Retry-After, Location';

/** The headers a response to `event` carries, or undefined when it carries none. */
export function corsHeadersForPublishable(event: APIGatewayProxyEvent): Record<string, string> | undefined {
  const context = event.requestContext?.authorizer as Record<string, unknown> | null | undefined;
  if (context?.credentialKind !== 'publishable' || typeof context.allowedOrigins !== 'string') return undefined;
  const raw = Object.entries(event.headers ?? {}).find(([name]) => name.toLowerCase() === 'origin')?.[1];
  const origin = raw === undefined ? undefined : normalizeOrigin(raw);
  if (!origin || !context.allowedOrigins.split(' ').includes(origin)) return undefined;
  return allowOriginHeaders(origin);
}

export function allowOriginHeaders(origin: string): Record<string, string> {
  return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': EXPOSED_HEADERS, Vary: 'Origin' };
}
