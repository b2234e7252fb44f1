import {
  AccessLogFormat,
  AuthorizationType,
  EndpointAccessMode,
  EndpointType,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  RequestAuthorizer,
  RestApi,
  SecurityPolicy,
} from 'aws-cdk-lib/aws-apigateway';
import type { CfnRestApi, IResource, Method } from 'aws-cdk-lib/aws-apigateway';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { join } from 'node:path';
import { API_FUNCTION_SIZING } from '#shared/platform/function-sizing.ts';
import { GATEWAY_RESPONSES, METHOD_NOT_ALLOWED } from '#shared/http/gateway-responses.ts';
import type { HttpMethod, RouteAuth, RouteDefinition } from '#shared/platform/routes.ts';
import { AUTHORIZERS } from '#shared/platform/routes.ts';
import { accessFor, AUTHORIZER_ACCESS } from '#shared/platform/function-environment.ts';
import { bindRoute } from './access.ts';
import type { ServiceResources } from './access.ts';
import { addGatewayErrorResponses, addMockErrorMethod } from './error-responses.ts';
import { pascalCase, serviceFunction } from './functions.ts';
import type { FunctionSources } from './functions.ts';
import { bundlingDefinesFor } from './bundled-assets.ts';
import { identitySourcesOf, publishableKeyAuthorizer } from './tokenization.ts';

/** `functionsDir` holds `<route.handler>.ts` for every route, and `authorizer.ts`. */
export interface PaymentsRestApiProps extends FunctionSources {
  readonly routes: readonly RouteDefinition[];
  readonly resources: ServiceResources;
  readonly credentialMacKey: IKey;
}

const ROUTE_PATH = /^\/v3(\/[^/]+)+$/;

/**
 * TLS on the API's own (execute-api) endpoint: 1.3, or 1.2 with forward-secret
 * (ECDHE) suites only, never 1.0 or 1.1 (PCI DSS 4.2.1: card numbers, CVVs and
 * Basic credentials arrive here). API Gateway's default for a regional API is
 * TLS_1_0. An enhanced policy (`SecurityPolicy_...`) needs an endpoint access
 * mode: STRICT also refuses a request whose SNI names another host or that
 * comes through another endpoint type. A custom domain has its own policy and
 * mode, set the same way (docs/operations.md, "Custom domain").
 */
export const API_SECURITY_POLICY = SecurityPolicy.TLS13_1_2_PFS_PQ_2025_09;
export const API_ENDPOINT_ACCESS_MODE = EndpointAccessMode.STRICT;

/** One route of the route table and the function that serves it. */
export interface RouteFunction {
  readonly route: RouteDefinition;
  readonly fn: NodejsFunction;
  readonly method: Method;
}

/**
 * One JSON line per request in the access log: who (source IP, the authorizer's
 * organization and access id), what (method, resource template, status,
 * latencies, gateway error type) and the ids to join with the function logs and
 * traces. No headers, no query string, no body: they carry credentials and card data.
 * Status and latency are numbers; values that may be absent ("-") are strings.
 */
const ACCESS_LOG_FORMAT = `{${[
  '"requestId":"$context.requestId"',
  '"extendedRequestId":"$context.extendedRequestId"',
  '"requestTime":"$context.requestTime"',
  '"httpMethod":"$context.httpMethod"',
  '"resourcePath":"$context.resourcePath"',
  '"status":$context.status',
  '"responseLatency":$context.responseLatency',
  '"integrationLatency":"$context.integrationLatency"',
  '"integrationStatus":"$context.integrationStatus"',
  '"responseLength":"$context.responseLength"',
  '"sourceIp":"$context.identity.sourceIp"',
  '"callerOrganizationId":"$context.authorizer.organizationId"',
  '"accessId":"$context.authorizer.principalId"',
  '"authorizerStatus":"$context.authorizer.status"',
  '"authorizerLatency":"$context.authorizer.integrationLatency"',
  '"errorType":"$context.error.responseType"',
  '"xrayTraceId":"$context.xrayTraceId"',
].join(',')}}`;

/** The REST API: one Lambda function per route of the route table, errors in the contract's envelope. */
export class PaymentsRestApi extends Construct {
  readonly api: RestApi;
  /** Every route's function, in route table order: monitoring and tests iterate it. */
  readonly routeFunctions: RouteFunction[] = [];
  /** Methods API Gateway answers itself (MOCK): 404 at the root, 405 on known paths. */
  readonly mockMethods: Method[] = [];
  readonly accessLogGroup: LogGroup;
  private readonly props: PaymentsRestApiProps;
  private authorizerFn?: NodejsFunction;
  private readonly authorizers = new Map<RouteAuth, RequestAuthorizer>();

  constructor(scope: Construct, id: string, props: PaymentsRestApiProps) {
    super(scope, id);
    this.props = props;
    const { environment } = props;

    this.accessLogGroup = new LogGroup(this, 'AccessLogs', {
      retention: environment.logRetention,
      removalPolicy: environment.removalPolicy,
    });
    this.api = new RestApi(this, 'RestApi', {
      restApiName: `payments-api-${environment.name}`,
      // Callers are merchant and partner servers: an edge (CloudFront) hop buys them nothing.
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      binaryMediaTypes: ['multipart/form-data'],
      // Access and execution logging need the region's API Gateway CloudWatch Logs role, an account
      // setting owned by its own stack (infra/account-settings.ts), never by an environment's stack.
      cloudWatchRole: false,
      deployOptions: {
        stageName: environment.name,
        throttlingRateLimit: environment.throttling.rateLimit,
        throttlingBurstLimit: environment.throttling.burstLimit,
        tracingEnabled: true,
        accessLogDestination: new LogGroupLogDestination(this.accessLogGroup),
        accessLogFormat: AccessLogFormat.custom(ACCESS_LOG_FORMAT),
        // Execution logs for errors only, and never request or response data (dataTrace): bodies carry card data.
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        metricsEnabled: false,
      },
    });
    // RestApi takes no security policy of its own yet; its CloudFormation resource does.
    const cfnApi = this.api.node.defaultChild as CfnRestApi;
    cfnApi.securityPolicy = API_SECURITY_POLICY;
    cfnApi.endpointAccessMode = API_ENDPOINT_ACCESS_MODE;
    // API Gateway creates the execution log group on first use, without retention; own it instead.
    new LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${this.api.restApiId}/${environment.name}`,
      retention: environment.logRetention,
      removalPolicy: environment.removalPolicy,
    });
    // The stack publishes the stage URL as ApiUrl; drop RestApi's generated duplicate.
    this.api.node.tryRemoveChild('Endpoint');
    addGatewayErrorResponses(this.api, environment.responseEnvironment);
    // The root is no route either; this also keeps the API deployable while the route table is empty
    // (API Gateway refuses an API without methods).
    this.mockMethods.push(addMockErrorMethod(this.api.root, environment.responseEnvironment, GATEWAY_RESPONSES.MISSING_AUTHENTICATION_TOKEN));

    const methodsByResource = new Map<IResource, HttpMethod[]>();
    for (const route of props.routes) {
      const resource = this.addRoute(route);
      methodsByResource.set(resource, [...(methodsByResource.get(resource) ?? []), route.method]);
    }
    for (const [resource, methods] of methodsByResource) {
      this.mockMethods.push(addMockErrorMethod(resource, environment.responseEnvironment, { ...METHOD_NOT_ALLOWED, headers: { Allow: methods.join(', ') } }));
    }
  }

  private addRoute(route: RouteDefinition): IResource {
    if (!ROUTE_PATH.test(route.path)) {
      throw new Error(`Route ${route.handler}: path "${route.path}" must start with /v3/ and have no empty segment`);
    }
    const fn = serviceFunction(this, `${pascalCase(route.handler)}Function`, {
      name: route.handler,
      entry: join(this.props.functionsDir, `${route.handler}.ts`),
      // Summaries can outgrow Lambda's 256-character description.
      description: `${route.method} ${route.path}`,
      environment: this.props.environment,
      projectRoot: this.props.projectRoot,
      sizing: API_FUNCTION_SIZING,
      define: bundlingDefinesFor(route),
    });
    bindRoute(fn, accessFor(route), this.props.resources);

    const resource = this.api.root.resourceForPath(route.path);
    const method = resource.addMethod(
      route.method,
      // No test-invoke permission: nobody tests methods from the console, and each was a resource per route.
      new LambdaIntegration(fn, { allowTestInvoke: false }),
      route.auth === 'none' ? { authorizationType: AuthorizationType.NONE } : { authorizer: this.requestAuthorizer(route.auth) },
    );
    this.routeFunctions.push({ route, fn, method });
    return resource;
  }

  /** The request authorizers' function, once a route needs one. */
  get authorizerFunction(): NodejsFunction | undefined {
    return this.authorizerFn;
  }

  /**
   * One authorizer per auth kind (see AUTHORIZERS), each created with the first
   * route of its kind: an authorizer attached to no method fails validation.
   */
  private requestAuthorizer(kind: Exclude<RouteAuth, 'none'>): RequestAuthorizer {
    let authorizer = this.authorizers.get(kind);
    if (!authorizer) {
      this.authorizerFn ??= this.createAuthorizerFunction();
      authorizer =
        kind === 'secret'
          ? this.createSecretAuthorizer(this.authorizerFn)
          : publishableKeyAuthorizer(this, this.authorizerFn, this.props.environment.authorizerCacheTtl);
      this.authorizers.set(kind, authorizer);
    }
    return authorizer;
  }

  private createAuthorizerFunction(): NodejsFunction {
    const { environment, resources, credentialMacKey } = this.props;
    const fn = serviceFunction(this, 'AuthorizerFunction', {
      name: 'authorizer',
      entry: join(this.props.functionsDir, 'authorizer.ts'),
      description: 'Request authorizer: Basic credentials and organization header',
      environment,
      projectRoot: this.props.projectRoot,
      sizing: API_FUNCTION_SIZING,
    });
    bindRoute(fn, AUTHORIZER_ACCESS, { ...resources, credentialMacKey });
    return fn;
  }

  private createSecretAuthorizer(fn: NodejsFunction): RequestAuthorizer {
    return new RequestAuthorizer(this, AUTHORIZERS.secret.name, {
      handler: fn,
      // Cached decisions are keyed on both headers (a credential is only valid for its organization) and the caller's address.
      identitySources: identitySourcesOf(AUTHORIZERS.secret),
      resultsCacheTtl: this.props.environment.authorizerCacheTtl,
    });
  }
}
