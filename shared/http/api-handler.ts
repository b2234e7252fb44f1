import { NotAuthenticated } from '#shared/domain/errors.ts';
import { assertPublishableScope, chargeMintAttempt } from '#shared/domain/publishable-keys.ts';
import { assertOrganizationAccess } from '#shared/domain/tenancy.ts';
import { logger } from '#shared/log/logger.ts';
import { organizationStore } from '#shared/wiring/organizations.ts';
import { mintRateLimiter } from '#shared/wiring/tokenization.ts';
import type { ApiMiddleware, ApiRouteHandler } from './api-stack.ts';
import { apiMiddlewareStack } from './api-stack.ts';
import type { RouteDefinition } from '../platform/routes.ts';
import { routeNamed } from '../platform/routes.ts';

export type { ApiRouteHandler } from './api-stack.ts';
export { toProxyResult } from './api-stack.ts';

/**
 * An authenticated API route: the shared middleware stack (api-stack.ts) with
 * the tenancy check, which reads organizations (and charges publishable-key
 * mints) in storage. Public routes use `publicApiHandler` instead.
 */
export function apiHandler(routeOrHandlerName: string | RouteDefinition, run: ApiRouteHandler) {
  const route = typeof routeOrHandlerName === 'string' ? routeNamed(routeOrHandlerName) : routeOrHandlerName;
  return apiMiddlewareStack(route, run, tenancy(route));
}

function tenancy(route: RouteDefinition): ApiMiddleware {
  return {
    before: async (request) => {
      const { caller, pathParameters, credentialKind, publishable, headers } = request.context.api;
      const organizationId = pathParameters.organization_id;
      if (caller) logger.appendKeys({ caller_organization_id: caller.organizationId, credential_kind: credentialKind });
      if (credentialKind === 'publishable' && publishable) {
        // Only routes that declare it take a publishable key; the authorizer refuses it elsewhere too.
        if (route.auth !== 'publishable-or-secret' || !organizationId) throw new NotAuthenticated('a publishable key can only mint one-time tokens');
        assertPublishableScope(publishable, { organizationId, locationId: pathParameters.location_id, origin: headers.origin });
        await chargeMintAttempt(publishable, mintRateLimiter(), new Date());
      } else if (route.auth !== 'none' && caller && organizationId) {
        await assertOrganizationAccess(caller, organizationId, organizationStore());
      }
    },
  };
}
