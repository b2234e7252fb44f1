import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { Construct } from 'constructs';
import { errorEnvelope } from '#shared/http/envelope.ts';

export interface ApiRateLimitProps {
  stage: Stage;
  /** Requests one source address may send per evaluation window before WAF blocks it. */
  limit: number;
  /** Seconds (60, 120, 300 or 600). */
  evaluationWindowSeconds: number;
  /** `response.environment` in the 429 body WAF sends. */
  responseEnvironment: string;
}

/**
 * Optional (environment setting `wafRateLimit`, off by default): a regional WAF
 * web ACL on the API stage with one rate-based rule per source address. It is
 * the volumetric backstop in front of the authorizer's own failed-authentication
 * throttle: it counts every request, valid or not, blocks before API Gateway or
 * Lambda run, and costs money per web ACL, rule and million requests, which is
 * why it is opt-in. Blocked requests get 429 in the contract's envelope.
 */
export class ApiRateLimit extends Construct {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: ApiRateLimitProps) {
    super(scope, id);
    const body = JSON.stringify({
      response: { ...errorEnvelope('THROTTLED', 'too many requests from this address; retry later').response, environment: props.responseEnvironment },
    });
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: { cloudWatchMetricsEnabled: true, metricName: 'payments-api-waf', sampledRequestsEnabled: false },
      customResponseBodies: { throttled: { contentType: 'APPLICATION_JSON', content: body } },
      rules: [
        {
          name: 'rate-per-source-address',
          priority: 0,
          statement: {
            rateBasedStatement: { aggregateKeyType: 'IP', limit: props.limit, evaluationWindowSec: props.evaluationWindowSeconds },
          },
          action: {
            block: {
              customResponse: {
                responseCode: 429,
                customResponseBodyKey: 'throttled',
                responseHeaders: [{ name: 'Retry-After', value: String(props.evaluationWindowSeconds) }],
              },
            },
          },
          visibilityConfig: { cloudWatchMetricsEnabled: true, metricName: 'payments-api-rate-per-source-address', sampledRequestsEnabled: false },
        },
      ],
    });
    new CfnWebACLAssociation(this, 'Association', { resourceArn: props.stage.stageArn, webAclArn: this.webAcl.attrArn });
  }
}
