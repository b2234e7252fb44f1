import middy from '@middy/core';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { KmsSecretHasher } from '#shared/aws/credential-hasher.ts';
import { dynamo } from '#shared/aws/dynamodb.ts';
import { kms } from '#shared/aws/kms.ts';
import { config } from '#shared/config.ts';
import { authenticate } from '#shared/domain/credentials.ts';
import { NotAuthenticated } from '#shared/domain/errors.ts';
import { authenticatePublishableKey, parseBearerPublishableKey } from '#shared/domain/publishable-keys.ts';
import type { RouteAuth } from '#shared/http/routes.ts';
import { routes } from '#shared/http/routes.ts';
import { injectLambdaContext, logger } from '#shared/log/logger.ts';
import { recordAuthenticationRefused } from '#shared/observability/metrics.ts';
import { captureLambdaHandler, tracer } from '#shared/observability/tracer.ts';
import { DynamoCredentialStore } from '#shared/store/credentials.ts';
import { DynamoPublishableKeyStore } from '#shared/store/publishable-keys.ts';

const deps = {
  credentials: new DynamoCredentialStore(dynamo, config.tableName),
  hasher: new KmsSecretHasher(kms, config.credentialMacKeyId),
  publishableKeys: new DynamoPublishableKeyStore(dynamo, config.tableName),
};

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
 */
export const handler = middy<APIGatewayRequestAuthorizerEvent, APIGatewayAuthorizerResult>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  // The policy and context are not secret, but they are per-caller: keep them out of traces.
  .use(captureLambdaHandler(tracer, { captureResponse: false }))
  .handler(async (event) => {
    const headers = Object.fromEntries(Object.entries(event.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
    const request = { authorization: headers.authorization, organizationId: headers['x-service-auth-organization-id'] };
    try {
      if (parseBearerPublishableKey(request.authorization) !== undefined) {
        if (guardedAuthKind(event) !== 'publishable-or-secret') throw new NotAuthenticated();
        const scope = await authenticatePublishableKey(request, deps);
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
      const caller = await authenticate(request, deps);
      return {
        principalId: caller.accessId,
        policyDocument: allow([stageWideArn(event.methodArn)]),
        context: { credentialKind: 'secret', organizationId: caller.organizationId, accessId: caller.accessId },
      };
    } catch (error) {
      if (error instanceof NotAuthenticated) {
        logger.info('authentication refused');
        recordAuthenticationRefused();
        throw new Error('Unauthorized');
      }
      throw error;
    }
  });

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
    .map((route) => `${apiArn}/${stage}/${route.method}${route.path.replace(/\{[^}]+\}/g, '*')}`);
}
