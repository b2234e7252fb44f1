import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';

export interface EnvironmentSettings {
  /** Stage name and stack name suffix. */
  readonly name: string;
  /** `response.environment` in every response body (ENVIRONMENT_NAME in the functions). */
  readonly responseEnvironment: string;
  readonly logRetention: RetentionDays;
  /** Applied to the table, keys, bucket and log groups. */
  readonly removalPolicy: RemovalPolicy;
  readonly deletionProtection: boolean;
  readonly authorizerCacheTtl: Duration;
  /** Stage-wide ceiling, kept under the account's regional limit so one API cannot starve the others. */
  readonly throttling: { readonly rateLimit: number; readonly burstLimit: number };
}

export const environments = {
  dev: {
    name: 'dev',
    responseEnvironment: 'sandbox',
    logRetention: RetentionDays.TWO_WEEKS,
    // A developer stack is torn down and rebuilt at will; nothing in it is real data.
    removalPolicy: RemovalPolicy.DESTROY,
    deletionProtection: false,
    authorizerCacheTtl: Duration.seconds(300),
    throttling: { rateLimit: 50, burstLimit: 100 },
  },
  prod: {
    name: 'prod',
    responseEnvironment: 'live',
    // PCI DSS 10.5.1 asks for a year of audit history.
    logRetention: RetentionDays.ONE_YEAR,
    removalPolicy: RemovalPolicy.RETAIN,
    deletionProtection: true,
    authorizerCacheTtl: Duration.seconds(300),
    throttling: { rateLimit: 500, burstLimit: 1000 },
  },
} as const satisfies Record<string, EnvironmentSettings>;

export type EnvironmentName = keyof typeof environments;

export function environmentSettings(name: string): EnvironmentSettings {
  if (!Object.hasOwn(environments, name)) {
    throw new Error(`Unknown environment "${name}"; expected one of: ${Object.keys(environments).join(', ')}`);
  }
  return environments[name as EnvironmentName];
}
