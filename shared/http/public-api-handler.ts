import type { ApiRouteHandler } from './api-stack.ts';
import { apiMiddlewareStack } from './api-stack.ts';
import { routeNamed } from '../platform/routes.ts';

/**
 * A public route (`auth: 'none'`): the shared middleware stack without the
 * tenancy check, so the function's bundle carries no storage client.
 */
export function publicApiHandler(handlerName: string, run: ApiRouteHandler) {
  const route = routeNamed(handlerName);
  if (route.auth !== 'none') throw new Error(`${handlerName} is not a public route: use apiHandler`);
  return apiMiddlewareStack(route, run);
}
