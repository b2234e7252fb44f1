import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { KmsSecretHasher } from '#shared/aws/credential-hasher.ts';
import { dynamo } from '#shared/aws/dynamodb.ts';
import { kms } from '#shared/aws/kms.ts';
import { config } from '#shared/config.ts';
import { authenticate } from '#shared/domain/credentials.ts';
import { NotAuthenticated } from '#shared/domain/errors.ts';
import { logger } from '#shared/log/logger.ts';
import { recordAuthenticationRefused } from '#shared/observability/metrics.ts';
import { tracer } from '#shared/observability/tracer.ts';
import { DynamoCredentialStore } from '#shared/store/credentials.ts';

const deps = {
  credentials: new DynamoCredentialStore(dynamo, config.tableName),
  hasher: new KmsSecretHasher(kms, config.credentialMacKeyId),
};

/**
 * REQUEST authorizer. API Gateway caches its answer on the two auth headers,
 * so the policy covers every route of the stage, never just the one asked for.
 * Throwing `Unauthorized` is how API Gateway is told to answer 401.
 */
export const handler = middy<APIGatewayRequestAuthorizerEvent, APIGatewayAuthorizerResult>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  // The policy and context are not secret, but they are per-caller: keep them out of traces.
  .use(captureLambdaHandler(tracer, { captureResponse: false }))
  .handler(async (event) => {
    const headers = Object.fromEntries(Object.entries(event.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
    try {
      const caller = await authenticate(
        { authorization: headers.authorization, organizationId: headers['x-service-auth-organization-id'] },
        deps,
      );
      return {
        principalId: caller.accessId,
        policyDocument: {
          Version: '2012-10-17',
          Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: stageWideArn(event.methodArn) }],
        },
        context: { organizationId: caller.organizationId, accessId: caller.accessId },
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

/**
 * arn:aws:execute-api:region:account:api-id/stage/METHOD/path -> arn:...:api-id/stage/*\/*
 * The api id is part of the first '/'-separated piece, so the stage is the second.
 */
export function stageWideArn(methodArn: string): string {
  const [apiArn, stage] = methodArn.split('/');
  return `${apiArn}/${stage}/*/*`;
}
