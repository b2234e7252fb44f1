import { Duration } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { join } from 'node:path';
import { API_FUNCTION_TIMEOUT_SECONDS } from '#shared/aws/deadline.ts';
import { METRICS_NAMESPACE, SERVICE_NAME } from '#shared/observability/catalog.ts';
import type { EnvironmentSettings } from './environments.ts';

export interface ServiceFunctionProps {
  /** The route's handler name, or `authorizer`: the key of its reserved concurrency setting. */
  readonly name: string;
  readonly entry: string;
  readonly description: string;
  readonly environment: EnvironmentSettings;
  /** Directory holding package.json (for `#shared/*` imports) and package-lock.json. */
  readonly projectRoot: string;
  /** Default: above the request deadline (shared/aws/deadline.ts), well under API Gateway's 29 s. */
  readonly timeout?: Duration;
  /** esbuild `define`s (identifier -> JavaScript expression), e.g. a built asset inlined as a string. */
  readonly define?: Record<string, string>;
  /** Default: 512 MB. */
  readonly memorySize?: number;
}

/**
 * One Lambda function with the project's fixed runtime, bundling, logging and
 * X-Ray tracing. Its role can write to its own log group and send traces, and
 * nothing else until something is granted.
 */
export function serviceFunction(scope: Construct, id: string, props: ServiceFunctionProps): NodejsFunction {
  const { environment } = props;
  const logGroup = new LogGroup(scope, `${id}Logs`, {
    retention: environment.logRetention,
    removalPolicy: environment.removalPolicy,
  });
  // Our own role instead of AWSLambdaBasicExecutionRole, whose log permissions cover every log group.
  const role = new Role(scope, `${id}Role`, { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
  logGroup.grantWrite(role);

  return new NodejsFunction(scope, id, {
    entry: props.entry,
    description: props.description,
    projectRoot: props.projectRoot,
    depsLockFilePath: join(props.projectRoot, 'package-lock.json'),
    runtime: Runtime.NODEJS_22_X,
    architecture: Architecture.ARM_64,
    memorySize: props.memorySize ?? 512,
    // The request deadline answers first (503 at worst); this only stops a run that escaped it, long before API Gateway's 29 s.
    timeout: props.timeout ?? Duration.seconds(API_FUNCTION_TIMEOUT_SECONDS),
    role,
    logGroup,
    // Adds xray:PutTraceSegments and xray:PutTelemetryRecords to the role (X-Ray has no resource-level permissions).
    tracing: Tracing.ACTIVE,
    reservedConcurrentExecutions: environment.reservedConcurrency[props.name],
    environment: {
      ENVIRONMENT_NAME: environment.responseEnvironment,
      NODE_OPTIONS: '--enable-source-maps',
      POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
      POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
    },
    bundling: {
      format: OutputFormat.ESM,
      minify: true,
      sourceMap: true,
      sourcesContent: false,
      target: 'node22',
      mainFields: ['module', 'main'],
      ...(props.define ? { define: props.define } : {}),
      // The SDK is bundled and tree-shaken rather than taken from the runtime: pinned versions, faster cold starts.
      externalModules: [],
      // CommonJS dependencies inside an ESM bundle still call require().
      banner: "import { createRequire } from 'module';const require = createRequire(import.meta.url);",
    },
  });
}
