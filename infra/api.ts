import {
  AuthorizationType,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  RequestAuthorizer,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import type { IResource } from 'aws-cdk-lib/aws-apigateway';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { join } from 'node:path';
import { GATEWAY_RESPONSES, METHOD_NOT_ALLOWED } from '#shared/http/gateway-responses.ts';
import type { HttpMethod, RouteDefinition } from '#shared/http/routes.ts';
import { accessFor, bindRoute } from './access.ts';
import type { ServiceResources } from './access.ts';
import type { EnvironmentSettings } from './environments.ts';
import { addGatewayErrorResponses, addMockErrorMethod } from './error-responses.ts';
import { serviceFunction } from './functions.ts';

export interface PaymentsRestApiProps {
  readonly environment: EnvironmentSettings;
  readonly routes: readonly RouteDefinition[];
  /** Holds `<route.handler>.ts` for every route, and `authorizer.ts`. */
  readonly functionsDir: string;
  readonly projectRoot: string;
  readonly resources: ServiceResources;
  readonly credentialMacKey: IKey;
}

const ROUTE_PATH = /^\/v3(\/[^/]+)+$/;

/** The REST API: one Lambda function per route of the route table, errors in the contract's envelope. */
export class PaymentsRestApi extends Construct {
  readonly api: RestApi;
  private readonly props: PaymentsRestApiProps;
  private authorizer?: RequestAuthorizer;

  constructor(scope: Construct, id: string, props: PaymentsRestApiProps) {
    super(scope, id);
    this.props = props;
    const { environment } = props;

    this.api = new RestApi(this, 'RestApi', {
      restApiName: `payments-api-${environment.name}`,
      // Callers are merchant and partner servers: an edge (CloudFront) hop buys them nothing.
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      binaryMediaTypes: ['multipart/form-data'],
      deployOptions: {
        stageName: environment.name,
        throttlingRateLimit: environment.throttling.rateLimit,
        throttlingBurstLimit: environment.throttling.burstLimit,
      },
    });
    // The stack publishes the stage URL as ApiUrl; drop RestApi's generated duplicate.
    this.api.node.tryRemoveChild('Endpoint');
    addGatewayErrorResponses(this.api, environment.responseEnvironment);
    // The root is no route either; this also keeps the API deployable while the route table is empty
    // (API Gateway refuses an API without methods).
    addMockErrorMethod(this.api.root, environment.responseEnvironment, GATEWAY_RESPONSES.MISSING_AUTHENTICATION_TOKEN);

    const methodsByResource = new Map<IResource, HttpMethod[]>();
    for (const route of props.routes) {
      const resource = this.addRoute(route);
      methodsByResource.set(resource, [...(methodsByResource.get(resource) ?? []), route.method]);
    }
    for (const [resource, methods] of methodsByResource) {
      addMockErrorMethod(resource, environment.responseEnvironment, { ...METHOD_NOT_ALLOWED, headers: { Allow: methods.join(', ') } });
    }
  }

  private addRoute(route: RouteDefinition): IResource {
    if (!ROUTE_PATH.test(route.path)) {
      throw new Error(`Route ${route.handler}: path "${route.path}" must start with /v3/ and have no empty segment`);
    }
    const fn = serviceFunction(this, `${pascalCase(route.handler)}Function`, {
      entry: join(this.props.functionsDir, `${route.handler}.ts`),
      // Summaries can outgrow Lambda's 256-character description.
      description: `${route.method} ${route.path}`,
      environment: this.props.environment,
      projectRoot: this.props.projectRoot,
    });
    bindRoute(fn, accessFor(route), this.props.resources);

    const resource = this.api.root.resourceForPath(route.path);
    resource.addMethod(
      route.method,
      new LambdaIntegration(fn),
      route.auth === 'secret'
        ? { authorizer: this.requestAuthorizer() }
        : { authorizationType: AuthorizationType.NONE },
    );
    return resource;
  }

  /** Created with the first secret route: an authorizer attached to no method fails validation. */
  private requestAuthorizer(): RequestAuthorizer {
    this.authorizer ??= this.createAuthorizer();
    return this.authorizer;
  }

  private createAuthorizer(): RequestAuthorizer {
    const { environment, resources, credentialMacKey } = this.props;
    const fn = serviceFunction(this, 'AuthorizerFunction', {
      entry: join(this.props.functionsDir, 'authorizer.ts'),
      description: 'Request authorizer: Basic credentials and organization header',
      environment,
      projectRoot: this.props.projectRoot,
    });
    bindRoute(fn, { table: 'read' }, resources);
    fn.addEnvironment('CREDENTIAL_MAC_KEY_ID', credentialMacKey.keyId);
    credentialMacKey.grant(fn, 'kms:GenerateMac');

    return new RequestAuthorizer(this, 'RequestAuthorizer', {
      handler: fn,
      // Cached decisions are keyed on both headers: a credential is only valid for its organization.
      identitySources: [
        IdentitySource.header('Authorization'),
        IdentitySource.header('X-Service-Auth-Organization-Id'),
      ],
      resultsCacheTtl: environment.authorizerCacheTtl,
    });
  }
}

function pascalCase(kebab: string): string {
  return kebab.replace(/(^|-)([a-z0-9])/g, (_match, _dash: string, char: string) => char.toUpperCase());
}
