import middy from '@middy/core';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import { requestClockOf, withRequestDeadline } from '#shared/runtime/deadline.ts';
import { AUTHORIZER_BUDGET_MS } from '#shared/platform/function-sizing.ts';
import type { AuthDecision } from '#shared/domain/authentication.ts';
import { authenticateRequest } from '#shared/domain/authentication.ts';
import { NotAuthenticated } from '#shared/domain/errors.ts';
import type { RouteAuth } from '#shared/platform/routes.ts';
import { routes } from '#shared/platform/routes.ts';
import { injectLambdaContext, logger } from '#shared/log/logger.ts';
import { recordAuthenticationRefused } from '#shared/observability/metrics.ts';
import { captureLambdaHandler, tracer } from '#shared/observability/tracer.ts';
import { authenticationDeps } from '#shared/wiring/authentication.ts';

/**
 * REQUEST authorizer, behind two API Gateway authorizers (see AUTHORIZERS in the
 * route table): the secret one on `secret` routes, the publishable one on
 * `publishable-or-secret` routes. Each caches its answers on the two auth
 * headers, so a policy covers every route that authorizer guards, never just
 * the one asked for. Throwing `Unauthorized` is how API Gateway is told to
 * answer 401: a publishable key presented to a secret route gets exactly that.
 *
 * The context says which kind of credential it was (`credentialKind`); for a
 * publishable key it also carries the key's location, allowed origins and
 * budget, which the route's middleware checks against each request.
 *
 * The answer depends on the Authorization header alone (and, when it fails,
 * on the caller's address): which organization the request names is checked
 * by the shared middleware on every request, so a cached answer stays right
 * whichever organization header, ours or Forte's, a client sends.
 *
 * Failed authentication is throttled per source address and per access id.
 * A REQUEST authorizer can only allow, deny (403) or refuse (401); it cannot
 * answer 429. So a throttled attempt is *allowed* with `credentialKind:
 * throttled` and the instant its window ends, and the shared middleware
 * answers 429 with Retry-After before anything else runs, or 401 once that
 * instant has passed (a cached answer may outlive it). Only attempts without
 * valid credentials are ever throttled, so a cached throttled answer never
 * stands for valid ones. The emulator passes the context on the same way, so
 * local and AWS answer alike.
 */
const authorize = middy<APIGatewayRequestAuthorizerEvent, APIGatewayAuthorizerResult>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  // The policy and context are not secret, but they are per-caller: keep them out of traces.
  .use(captureLambdaHandler(tracer, { captureResponse: false }))
  .handler(async (event) => {
    const headers = Object.fromEntries(Object.entries(event.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
    const request = {
      authorization: headers.authorization,
      sourceIp: event.requestContext?.identity?.sourceIp ?? 'unknown',
      publishableAllowed: guardedAuthKind(event) === 'publishable-or-secret',
    };
    let decision: AuthDecision;
    try {
      decision = await authenticateRequest(request, authenticationDeps());
    } catch (error) {
      if (error instanceof NotAuthenticated) {
        logger.info('authentication refused');
        recordAuthenticationRefused('unauthorized');
        // API Gateway reads only the message: 'Unauthorized' is its signal for a 401.
        throw new Error('Unauthorized', { cause: error });
      }
      throw error;
    }
    if (decision.kind === 'throttled') {
      logger.warn('authentication throttled for this source address or access id', { until: decision.until });
      recordAuthenticationRefused('throttled');
      return {
        principalId: 'throttled',
        policyDocument: allow([stageWideArn(event.methodArn)]),
        context: { credentialKind: 'throttled', throttledUntil: decision.until },
      };
    }
    if (decision.kind === 'publishable') {
      const { scope } = decision;
      return {
        principalId: scope.publishableKey,
        policyDocument: allow(publishableRouteArns(event.methodArn)),
        context: {
          credentialKind: 'publishable',
          organizationId: scope.organizationId,
          accessId: scope.publishableKey,
          locationId: scope.locationId,
          // Context values are strings, numbers or booleans; origins contain no spaces.
          allowedOrigins: scope.allowedOrigins.join(' '),
          mintsPerMinute: scope.mintsPerMinute,
        },
      };
    }
    return {
      principalId: decision.caller.accessId,
      policyDocument: allow([stageWideArn(event.methodArn)]),
      context: { credentialKind: 'secret', organizationId: decision.caller.organizationId, accessId: decision.caller.accessId },
    };
  });

/** Under the request's deadline, capped at its own share: a stalled store or KMS fails the authorizer (503) instead of eating the route's time. */
export const handler = (event: APIGatewayRequestAuthorizerEvent, context: Context) =>
  withRequestDeadline(requestClockOf(event, context), () => authorize(event, context), AUTHORIZER_BUDGET_MS);

function allow(resources: string[]): APIGatewayAuthorizerResult['policyDocument'] {
  return { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: resources }] };
}

/**
 * Which authorizer this call came through, from the route it guards. Every route
 * behind one authorizer has the same auth kind, so a cached answer stays right.
 */
function guardedAuthKind(event: APIGatewayRequestAuthorizerEvent): RouteAuth | undefined {
  return routes.find((route) => route.path === event.resource && route.method === event.httpMethod)?.auth;
}

/**
 * arn:aws:execute-api:region:account:api-id/stage/METHOD/path -> arn:...:api-id/stage/*\/*
 * The api id is part of the first '/'-separated piece, so the stage is the second.
 */
export function stageWideArn(methodArn: string): string {
  const [apiArn, stage] = methodArn.split('/');
  return `${apiArn}/${stage}/*/*`;
}

/** A publishable key's policy names only the routes that accept publishable keys. */
export function publishableRouteArns(methodArn: string): string[] {
  const [apiArn, stage] = methodArn.split('/');
  return routes
    .filter((route) => route.auth === 'publishable-or-secret')
    // "A trailing slash is accepted on every route": the ARN of a request for `.../onetimetokens/` ends in one too.
    .flatMap((route) => {
      const arn = `${apiArn}/${stage}/${route.method}${route.path.replace(/\{[^}]+\}/g, '*')}`;
      return [arn, `${arn}/`];
    });
}
