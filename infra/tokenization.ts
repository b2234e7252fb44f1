/**
 * Client-side tokenization in the stack: the publishable-key authorizer (the
 * library is inlined into the function that serves it by bundled-assets.ts). The routes
 * themselves (minting with `publishable-or-secret`, its OPTIONS preflight, the
 * script) come from the route table like every other route.
 */
import type { Duration } from 'aws-cdk-lib';
import { IdentitySource, RequestAuthorizer } from 'aws-cdk-lib/aws-apigateway';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { AUTHORIZERS } from '#shared/http/routes.ts';

/**
 * The authorizer of `publishable-or-secret` routes: the same function as the
 * secret one, but its own API Gateway authorizer, so its cached answers (which
 * may allow a publishable key) never apply to secret-only routes. Its identity
 * sources are the two auth headers both kinds send; Origin cannot be one (server
 * callers send none), so the origin is checked by the route on every request.
 */
export function publishableKeyAuthorizer(scope: Construct, handler: IFunction, resultsCacheTtl: Duration): RequestAuthorizer {
  const { name, identityHeaders } = AUTHORIZERS['publishable-or-secret'];
  return new RequestAuthorizer(scope, name, {
    handler,
    identitySources: identityHeaders.map((header) => IdentitySource.header(header)),
    resultsCacheTtl,
  });
}
