import { CfnResource, Duration, Stack } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IRole } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat, SourceMapMode } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { join } from 'node:path';
import type { FunctionSizing } from '#shared/platform/function-sizing.ts';
import { METRICS_NAMESPACE, SERVICE_NAME } from '#shared/observability/catalog.ts';
import { LAMBDA_BUNDLE_OPTIONS, LAMBDA_NODE_OPTIONS, SOURCE_MAPS_DIR } from './bundling.ts';
import type { EnvironmentSettings } from './environments.ts';

/** The Lambda runtime of every function: Node.js `NODE_MAJOR` (infra/bundling.ts). */
export const LAMBDA_RUNTIME = Runtime.NODEJS_24_X;

export interface ServiceFunctionProps {
  /** The handler's module name, or `authorizer`: the key of its reserved concurrency setting. */
  readonly name: string;
  readonly entry: string;
  readonly description: string;
  readonly environment: EnvironmentSettings;
  /** Directory holding package.json (for `#shared/*` imports) and package-lock.json. */
  readonly projectRoot: string;
  /** Memory and timeout (shared/platform/function-sizing.ts), which the local runtime gives the handler too. */
  readonly sizing: FunctionSizing;
  /** esbuild `define`s (identifier -> JavaScript expression), e.g. a built asset inlined as a string. */
  readonly define?: Record<string, string>;
}

/** Where a feature's functions come from and what environment they are built for: every function-building construct takes these. */
export interface FunctionSources {
  readonly environment: EnvironmentSettings;
  /** Directory holding package.json (for `#shared/*` imports) and package-lock.json. */
  readonly projectRoot: string;
  /** Holds `<handler>.ts` for every function. */
  readonly functionsDir: string;
}

/**
 * One Lambda function with the project's fixed runtime, bundling, logging and
 * X-Ray tracing. Its role can write to its own log group and send traces, and
 * nothing else until something is granted.
 */
export function serviceFunction(scope: Construct, id: string, props: ServiceFunctionProps): NodejsFunction {
  const { environment } = props;
  const root = rootStackOf(scope);
  const names = FUNCTION_NAMES.get(root) ?? new Set<string>();
  FUNCTION_NAMES.set(root, names.add(props.name));
  const logGroup = new LogGroup(scope, `${id}Logs`, {
    retention: environment.logRetention,
    removalPolicy: environment.removalPolicy,
  });
  const role = functionRole(scope, `${id}Role`);
  logGroup.grantWrite(role);

  const bundle = LAMBDA_BUNDLE_OPTIONS;
  // cdk.out/source-maps/<stack>/<name>.mjs.map, under the top-level stack's name (a nested stack's is known only at deploy):
  // kept with the cloud assembly, never deployed (npm run symbolicate).
  const sourceMapTarget = join('..', SOURCE_MAPS_DIR, root.stackName, `${props.name}.mjs.map`);
  return new NodejsFunction(scope, id, {
    entry: props.entry,
    description: props.description,
    projectRoot: props.projectRoot,
    depsLockFilePath: join(props.projectRoot, 'package-lock.json'),
    runtime: LAMBDA_RUNTIME,
    architecture: Architecture.ARM_64,
    memorySize: props.sizing.memoryMb,
    timeout: Duration.seconds(props.sizing.timeoutSeconds),
    role,
    logGroup,
    // Adds xray:PutTraceSegments and xray:PutTelemetryRecords to the role (X-Ray has no resource-level permissions).
    tracing: Tracing.ACTIVE,
    reservedConcurrentExecutions: environment.reservedConcurrency[props.name],
    environment: {
      ENVIRONMENT_NAME: environment.responseEnvironment,
      ...(LAMBDA_NODE_OPTIONS ? { NODE_OPTIONS: LAMBDA_NODE_OPTIONS } : {}),
      POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
      POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
    },
    bundling: {
      format: OutputFormat.ESM,
      minify: bundle.minify,
      sourceMap: true,
      sourceMapMode: SourceMapMode.EXTERNAL,
      sourcesContent: bundle.sourcesContent,
      target: bundle.target,
      mainFields: [...bundle.mainFields],
      ...(props.define ? { define: props.define } : {}),
      // The SDK is bundled and tree-shaken rather than taken from the runtime: pinned versions, faster cold starts.
      externalModules: [],
      // esbuild's per-bundle size summary is noise in `cdk synth --quiet`; its warnings would be too, and none is allowed.
      logLevel: LogLevel.ERROR,
      banner: bundle.banner.js,
      commandHooks: {
        beforeBundling: () => [],
        beforeInstall: () => [],
        // The map leaves the asset: a deployed function neither uploads nor loads it.
        afterBundling: (_inputDir, outputDir) => [
          `mkdir -p "${join(outputDir, sourceMapTarget, '..')}" && mv "${join(outputDir, 'index.mjs.map')}" "${join(outputDir, sourceMapTarget)}"`,
        ],
      },
    },
  });
}

/** A function of the trigger tables (shared/platform/triggers.ts): named, described and sized as the table says. */
export function triggerFunction(scope: Construct, trigger: { readonly handler: string; readonly summary: string; readonly sizing: FunctionSizing }, sources: FunctionSources): NodejsFunction {
  return serviceFunction(scope, `${pascalCase(trigger.handler)}Function`, {
    name: trigger.handler,
    entry: join(sources.functionsDir, `${trigger.handler}.ts`),
    // Lambda's limit; summaries can be longer.
    description: trigger.summary.slice(0, 256),
    environment: sources.environment,
    projectRoot: sources.projectRoot,
    sizing: trigger.sizing,
  });
}

/**
 * Our own role instead of AWSLambdaBasicExecutionRole, whose log permissions cover every log group.
 *
 * The role itself lives in the top-level stack, beside the scoped keys whose policies name it
 * (infra/keys.ts): KMS refuses a key policy naming a role that does not exist yet, and a key in
 * the parent naming a role of a nested stack would make each stack wait for the other. Its
 * policies live with the function, attached to it by name, so they may name anything of the
 * function's own stack. A function of the top-level stack (or of a test's single stack) keeps
 * its role beside it.
 */
function functionRole(scope: Construct, id: string): IRole {
  const root = rootStackOf(scope);
  const assumedBy = new ServicePrincipal('lambda.amazonaws.com');
  if (Stack.of(scope) === root) return new Role(scope, id, { assumedBy });
  const roles = (root.node.tryFindChild(FUNCTION_ROLES_ID) as Construct | undefined) ?? new Construct(root, FUNCTION_ROLES_ID);
  const pathInStack = scope.node.scopes.slice(scope.node.scopes.indexOf(Stack.of(scope)) + 1).map((construct) => construct.node.id);
  const role = new Role(roles, [...pathInStack, id].join(''), { assumedBy });
  return Role.fromRoleArn(scope, id, role.roleArn, { mutable: true });
}

const FUNCTION_ROLES_ID = 'FunctionRoles';

/** The stack `cdk deploy` is given: a nested stack's parent's, or its own. */
export function rootStackOf(scope: Construct): Stack {
  let stack = Stack.of(scope);
  while (stack.nestedStackParent) stack = stack.nestedStackParent;
  return stack;
}

export function pascalCase(kebab: string): string {
  return kebab.replace(/(^|-)([a-z0-9])/g, (_match, _dash: string, char: string) => char.toUpperCase());
}

/** The construct id CDK gives its bucket-notifications function, one per stack (aws-s3's NotificationsResourceHandler). */
const BUCKET_NOTIFICATIONS_HANDLER_ID = 'BucketNotificationsHandler050a0587b7544547bf325f094a3db834';

/** The names of each top-level stack's functions (its nested stacks' included), as cdk.json's per-function settings use them. */
const FUNCTION_NAMES = new WeakMap<Stack, Set<string>>();

/**
 * Refuses (at synth) a `reservedConcurrency` entry that names no function of
 * the stack: a misspelt name would otherwise leave that function uncapped
 * without a word. Called once every function exists.
 */
export function assertReservedConcurrencyNames(stack: Stack, environment: EnvironmentSettings): void {
  const names = FUNCTION_NAMES.get(stack) ?? new Set<string>();
  const unknown = Object.keys(environment.reservedConcurrency).filter((name) => !names.has(name));
  if (unknown.length > 0) {
    throw new Error(`reservedConcurrency names no function of ${stack.stackName}: ${unknown.join(', ')} (its functions: ${[...names].sort().join(', ')})`);
  }
}

/**
 * CDK's own deploy-time function that applies a bucket's notification
 * settings (here, EventBridge on) has no log group in the template, so Lambda
 * creates one on its first run and keeps it forever. This gives it one of the
 * stack's, with the environment's retention, as every other function has.
 */
export function bucketNotificationsLogGroup(stack: Stack, environment: EnvironmentSettings): void {
  const handler = stack.node.tryFindChild(BUCKET_NOTIFICATIONS_HANDLER_ID);
  if (!handler) return;
  const fn = handler.node.tryFindChild('Resource');
  // A CDK release that builds the function differently fails the synth here rather than leave it unlogged.
  if (!(fn instanceof CfnResource) || fn.cfnResourceType !== 'AWS::Lambda::Function') throw new Error(`${BUCKET_NOTIFICATIONS_HANDLER_ID} has no Lambda function named Resource`);
  const logGroup = new LogGroup(stack, 'BucketNotificationsLogs', {
    retention: environment.logRetention,
    removalPolicy: environment.removalPolicy,
  });
  fn.addPropertyOverride('LoggingConfig', { LogGroup: logGroup.logGroupName });
}
