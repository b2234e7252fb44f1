import { CfnLoggingConfiguration, CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { ArnFormat, Stack } from 'aws-cdk-lib';
import type { RemovalPolicy } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { errorEnvelope } from '#shared/http/envelope.ts';
import type { RouteDefinition } from '#shared/platform/routes.ts';

export interface ApiWebAclProps {
  stage: Stage;
  /** Requests one source address may send per evaluation window before WAF blocks it. */
  rateLimit: number;
  /** Seconds (60, 120, 300 or 600). */
  evaluationWindowSeconds: number;
  /** `response.environment` in the 429 and 403 bodies WAF sends. */
  responseEnvironment: string;
  /** The routes whose bodies are uploads (multipart files): the body rules below do not apply to them. */
  uploadRoutes: readonly RouteDefinition[];
  environmentName: string;
  logRetention: RetentionDays;
  removalPolicy: RemovalPolicy;
}

/** Request headers WAF never writes to its log: the Basic credentials (every secret route), the only secret a request header carries. */
export const WAF_REDACTED_HEADERS = ['authorization'] as const;

/**
 * The Core rule set's rules on the request body. WAF inspects the first 8 KB of
 * a body (API Gateway's default); an upload is a multipart file of up to
 * 4.7 MB, so SizeRestrictions_BODY (over 8 KB) would refuse every real one,
 * and a file's bytes (a PDF's own JavaScript and URLs, compressed image data)
 * are no HTML or URL parameter: cross-site scripting and remote file inclusion
 * patterns there say nothing about an attack on this API, which stores the
 * bytes and never renders them. So the group only counts (labels) them, and
 * the rule after it blocks them everywhere but on the upload routes.
 * Every other route takes a JSON body of at most a few kilobytes.
 */
export const BODY_RULES_EXCEPT_UPLOADS = ['SizeRestrictions_BODY', 'CrossSiteScripting_BODY', 'GenericRFI_BODY'] as const;

/**
 * Counted, never blocked: callers are merchant and partner servers, whose HTTP
 * clients may send no User-Agent; the contract asks for none, and a missing
 * one says nothing about a caller that must still pass the authorizer.
 */
export const COUNTED_ONLY = ['NoUserAgent_HEADER'] as const;

const CORE_RULE_SET_LABEL = 'awswaf:managed:aws:core-rule-set:';
/** The rule names above as the labels the Core rule set gives a request (`SizeRestrictions_BODY` -> `SizeRestrictions_Body`). */
function coreRuleSetLabel(rule: string): string {
  const [name, part] = rule.split('_') as [string, string];
  return `${CORE_RULE_SET_LABEL}${name}_${part.charAt(0)}${part.slice(1).toLowerCase()}`;
}

/**
 * The upload routes' paths, for WAF's regular expression on the URI path: the
 * stage (or a custom domain's base path) comes before `/v3`, and any segment
 * fills a path parameter (API Gateway and the function check it afterwards).
 */
export function uploadPathPattern(uploadRoutes: readonly RouteDefinition[]): string {
  const paths = uploadRoutes.map((route) => route.path.replace(/\{\w+\}/g, '[^/]+'));
  return `(${paths.join('|')})/?$`;
}

type Rule = CfnWebACL.RuleProperty;

function visibility(metricName: string): CfnWebACL.VisibilityConfigProperty {
  return { cloudWatchMetricsEnabled: true, metricName, sampledRequestsEnabled: true };
}

function managedRuleGroup(name: string, priority: number, overrides: Readonly<Record<string, 'count'>> = {}): Rule {
  return {
    name,
    priority,
    statement: {
      managedRuleGroupStatement: {
        vendorName: 'AWS',
        name,
        ...(Object.keys(overrides).length > 0 ? { ruleActionOverrides: Object.keys(overrides).map((rule) => ({ name: rule, actionToUse: { count: {} } })) } : {}),
      },
    },
    overrideAction: { none: {} },
    visibilityConfig: visibility(`payments-api-${name}`),
  };
}

/**
 * The regional WAF web ACL on the API stage (environment setting `webAcl`, on
 * unless an environment turns it off; dev does, for cost). In order:
 *
 * 0. Amazon IP reputation list: addresses AWS threat intelligence has seen
 *    attacking, blocked before anything else runs.
 * 1. A rate-based rule per source address, 429 in the contract's envelope: the
 *    volumetric wall in front of the authorizer's own failed-authentication
 *    throttle. It counts every request, valid or not.
 * 2. Known bad inputs (Log4j, Java deserialization, host-header and path exploits).
 * 3. The Core rule set (OWASP Top 10 patterns), its body rules counted (see
 *    BODY_RULES_EXCEPT_UPLOADS) and NoUserAgent_HEADER counted (COUNTED_ONLY).
 * 4. The body rules' labels blocked on every route but the upload routes.
 *
 * Blocks other than the rate rule answer 403 FORBIDDEN in the envelope. Every
 * request is logged to a CloudWatch log group `aws-waf-logs-payments-api-<environment>`
 * (WAF requires the prefix) with the Authorization header redacted; WAF logs
 * no bodies. This is what PCI DSS 6.4.2 asks of public-facing web applications:
 * an automated technical solution that detects and prevents web-based attacks,
 * in front of the API, logging what it does.
 */
export class ApiWebAcl extends Construct {
  readonly webAcl: CfnWebACL;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: ApiWebAclProps) {
    super(scope, id);
    const body = (code: 'THROTTLED' | 'FORBIDDEN', message: string) =>
      JSON.stringify({ response: { ...errorEnvelope(code, message).response, environment: props.responseEnvironment } });
    const forbidden: CfnWebACL.RuleActionProperty = { block: { customResponse: { responseCode: 403, customResponseBodyKey: 'forbidden' } } };

    const rules: Rule[] = [
      managedRuleGroup('AWSManagedRulesAmazonIpReputationList', 0),
      {
        name: 'rate-per-source-address',
        priority: 1,
        statement: {
          rateBasedStatement: { aggregateKeyType: 'IP', limit: props.rateLimit, evaluationWindowSec: props.evaluationWindowSeconds },
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
        visibilityConfig: visibility('payments-api-rate-per-source-address'),
      },
      managedRuleGroup('AWSManagedRulesKnownBadInputsRuleSet', 2),
      managedRuleGroup('AWSManagedRulesCommonRuleSet', 3, Object.fromEntries([...BODY_RULES_EXCEPT_UPLOADS, ...COUNTED_ONLY].map((rule) => [rule, 'count' as const]))),
      {
        name: 'body-rules-except-uploads',
        priority: 4,
        statement: {
          andStatement: {
            statements: [
              { orStatement: { statements: BODY_RULES_EXCEPT_UPLOADS.map((rule) => ({ labelMatchStatement: { scope: 'LABEL', key: coreRuleSetLabel(rule) } })) } },
              {
                notStatement: {
                  statement: {
                    andStatement: {
                      statements: [
                        { byteMatchStatement: { fieldToMatch: { method: {} }, positionalConstraint: 'EXACTLY', searchString: 'POST', textTransformations: [{ priority: 0, type: 'NONE' }] } },
                        { regexMatchStatement: { fieldToMatch: { uriPath: {} }, regexString: uploadPathPattern(props.uploadRoutes), textTransformations: [{ priority: 0, type: 'NONE' }] } },
                      ],
                    },
                  },
                },
              },
            ],
          },
        },
        action: forbidden,
        visibilityConfig: visibility('payments-api-body-rules-except-uploads'),
      },
    ];

    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('payments-api-waf'),
      customResponseBodies: {
        throttled: { contentType: 'APPLICATION_JSON', content: body('THROTTLED', 'too many requests from this address; retry later') },
        forbidden: { contentType: 'APPLICATION_JSON', content: body('FORBIDDEN', 'the request was refused by the web application firewall') },
      },
      rules,
    });
    new CfnWebACLAssociation(this, 'Association', { resourceArn: props.stage.stageArn, webAclArn: this.webAcl.attrArn });

    this.logGroup = new LogGroup(this, 'Logs', {
      logGroupName: `aws-waf-logs-payments-api-${props.environmentName}`,
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    const logging = new CfnLoggingConfiguration(this, 'Logging', {
      resourceArn: this.webAcl.attrArn,
      // WAF takes the group's ARN without the ":*" suffix that the log group's own Arn attribute carries.
      logDestinationConfigs: [
        Stack.of(this).formatArn({ service: 'logs', resource: 'log-group', resourceName: this.logGroup.logGroupName, arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
      ],
      redactedFields: WAF_REDACTED_HEADERS.map((name) => ({ singleHeader: { Name: name } })),
    });
    logging.node.addDependency(this.logGroup);
  }
}
