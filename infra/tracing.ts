/**
 * X-Ray sampling of the API, as a rule of the stack rather than the account's
 * default: the stage (and the route functions, which follow its decision)
 * records the first request of each second and this share of the rest. The
 * values are X-Ray's default ones, written down so that their cost is a
 * figure of the template (docs/operations.md, "Log retention and trace
 * sampling"). Functions that no request invokes (S3 and stream triggers,
 * the Account Updater) sample on Lambda's own terms, which no rule changes.
 */
import { CfnSamplingRule } from 'aws-cdk-lib/aws-xray';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import type { Construct } from 'constructs';

export const API_TRACE_SAMPLING = { reservoirPerSecond: 1, fixedRate: 0.05 } as const;

export function apiSamplingRule(scope: Construct, stage: Stage, environmentName: string): CfnSamplingRule {
  return new CfnSamplingRule(scope, 'ApiSamplingRule', {
    samplingRule: {
      // Account-wide names: one per environment.
      ruleName: `payments-api-${environmentName}`,
      priority: 100,
      reservoirSize: API_TRACE_SAMPLING.reservoirPerSecond,
      fixedRate: API_TRACE_SAMPLING.fixedRate,
      // API Gateway names its segments <rest api name>/<stage>.
      serviceName: `${stage.restApi.restApiName}/${stage.stageName}`,
      serviceType: 'AWS::ApiGateway::Stage',
      host: '*',
      httpMethod: '*',
      urlPath: '*',
      resourceArn: '*',
      version: 1,
    },
  });
}
