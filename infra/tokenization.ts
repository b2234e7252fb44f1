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
import { AUTHORIZERS } from '#shared/platform/routes.ts';

/**
 * The authorizer of `publishable-or-secret` routes: the same function as the
 * secret one, but its own API Gateway authorizer, so its cached answers (which
 * may allow a publishable key) never apply to secret-only routes. Its identity
 * sources are the two auth headers both kinds send; Origin cannot be one (server
 * callers send none), so the origin is checked by the route on every request.
 */
export function publishableKeyAuthorizer(scope: Construct, handler: IFunction, resultsCacheTtl: Duration): RequestAuthorizer {
  const authorizer = AUTHORIZERS['publishable-or-secret'];
  return new RequestAuthorizer(scope, authorizer.name, {
    handler,
    identitySources: identitySourcesOf(authorizer),
    resultsCacheTtl,
  });
}

/** An authorizer's cache key as API Gateway takes it: its headers, then its context variables (the caller's address). */
export function identitySourcesOf(authorizer: { readonly identityHeaders: readonly string[]; readonly identityContext: readonly string[] }): string[] {
  return [...authorizer.identityHeaders.map((header) => IdentitySource.header(header)), ...authorizer.identityContext.map((variable) => IdentitySource.context(variable))];
}
