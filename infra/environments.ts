import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import * as z from 'zod/mini';
import { AUTHORIZER_CACHE_TTL_SECONDS } from '#shared/platform/names.ts';

/**
 * Per-environment settings. The values live in cdk.json under the `environments`
 * context key (one object per environment name), so an operator changes them
 * without touching code and `-c environment=<name>` picks one. This module only
 * validates them and turns them into CDK types.
 */
export interface EnvironmentSettings {
  /** Stage name and stack name suffix. */
  readonly name: string;
  /** `response.environment` in every response body (ENVIRONMENT_NAME in the functions). */
  readonly responseEnvironment: string;
  /** How long every log group, the S3 access logs and their locked archive keep their events (cdk.json `logRetentionDays`). */
  readonly logRetention: RetentionDays;
  /** Applied to the table, keys, buckets and log groups. */
  readonly removalPolicy: RemovalPolicy;
  /** DynamoDB deletion protection on every table. */
  readonly deletionProtection: boolean;
  /** How long API Gateway keeps an authorizer decision (at most 30 s: last_used_at's resolution). */
  readonly authorizerCacheTtl: Duration;
  /**
   * The stage's default method throttle: API Gateway applies it to each method
   * on its own (a flood on one route is 429 there, the others go on), not to
   * the stage as a whole; the account's regional limit caps their sum.
   */
  readonly throttling: { readonly rateLimit: number; readonly burstLimit: number };
  /** Alarm thresholds and destination (below). */
  readonly alarms: AlarmSettings;
  /**
   * Reserved concurrency by function: a route's handler name, or `authorizer`.
   * Unset means the function shares the account's unreserved pool. Reserving caps
   * the function too, and the account must keep 100 executions unreserved.
   */
  readonly reservedConcurrency: Readonly<Record<string, number>>;
  /**
   * The account's Lambda concurrency quota in this region, as Service Quotas
   * states it (1,000 unless raised). Synth refuses reservations that would leave
   * fewer than `UNRESERVED_CONCURRENCY_MINIMUM` of it unreserved: Lambda would
   * refuse the last function's reservation mid-deploy.
   */
  readonly accountConcurrencyLimit: number;
  /**
   * IAM principals (role ARNs) allowed to issue credentials with the admin CLI
   * (kms:GenerateMac on the credential key). Empty: any IAM principal of the
   * account whose own IAM policy allows kms:GenerateMac on that key.
   */
  readonly credentialIssuers: readonly string[];
  /**
   * IAM role ARNs, of this account or another (a card network's, an operator's),
   * that deliver Account Updater files: they may put objects under `au-inbox/` of
   * the reports bucket (each .csv starts a run) and nothing else of it.
   * Empty: nothing outside the stack can deliver a file.
   */
  readonly reportsInboxWriters: readonly string[];
  /**
   * IAM role ARNs, of this account or another (finance, reconciliation), that
   * read the run summaries and error lists under `au-results/` and the monthly
   * exports under `au-reports/` of the reports bucket, and nothing else of it.
   * Empty: nothing outside the stack can read them.
   */
  readonly reportsReaders: readonly string[];
  /** PayPal REST API base: the sandbox for dev, live for prod. */
  readonly paypalApiUrl: string;
  /**
   * The WAF web ACL on the stage (infra/waf.ts): managed rule groups, logging,
   * and a rate-based rule of at most `rateLimit` requests per source address per
   * `evaluationWindowSeconds`. On unless the environment sets `"webAcl": false`
   * (dev, for cost): undefined then.
   */
  readonly webAcl?: WebAclSettings;
}

export interface WebAclSettings {
  /** Requests one source address may send per window before WAF blocks it (429). */
  readonly rateLimit: number;
  /** WAF's rate-based windows, in seconds. */
  readonly evaluationWindowSeconds: 60 | 120 | 300 | 600;
}

/**
 * Every bucket refuses requests over TLS older than this (a bucket policy
 * denying `s3:TlsVersion` below it, beside the deny of plain HTTP), in every
 * environment: presigned upload forms and the CLIs reach S3 directly.
 */
export const MINIMUM_S3_TLS_VERSION = 1.2;

/** What every bucket of the service is, whatever it holds: private, owner-enforced, TLS only (MINIMUM_S3_TLS_VERSION), versioned. */
export const PRIVATE_BUCKET = {
  blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
  objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
  enforceSSL: true,
  minimumTLSVersion: MINIMUM_S3_TLS_VERSION,
  versioned: true,
} as const;

/** What Lambda keeps unreserved in every account and region: a reservation that would leave less fails. */
export const UNRESERVED_CONCURRENCY_MINIMUM = 100;
/** Lambda's default concurrency quota per account and region (Service Quotas L-B99A9384). */
export const DEFAULT_ACCOUNT_CONCURRENCY_LIMIT = 1000;

/** The web ACL an environment gets unless it says otherwise. */
export const DEFAULT_WEB_ACL: WebAclSettings = { rateLimit: 2000, evaluationWindowSeconds: 300 };

export interface AlarmSettings {
  /** Off: no alarms are created (the dashboard and the topic still are). */
  readonly enabled: boolean;
  /** Subscribed to the alarm topic when set (the address must confirm the subscription). */
  readonly email?: string;
  /** API 5xx rate, in percent of requests, over 5 minutes. */
  readonly serverErrorRatePercent: number;
  /** API Gateway p99 Latency, in milliseconds, over 5 minutes. */
  readonly p99LatencyMs: number;
}

const retentionValues = new Set<number>(Object.values(RetentionDays).filter((value): value is number => typeof value === 'number'));

const positive = z.number().check(z.positive());
const positiveInteger = z.int().check(z.positive());
const roleArns = z._default(z.array(z.string().check(z.regex(/^arn:aws[a-z-]*:iam::\d{12}:role\/.+$/, 'must be an IAM role ARN'))), []);

const settingsSchema = z.strictObject({
  responseEnvironment: z.string().check(z.minLength(1)),
  logRetentionDays: z.int().check(z.refine((days) => retentionValues.has(days), 'must be a CloudWatch Logs retention value')),
  removalPolicy: z.enum(['destroy', 'retain']),
  deletionProtection: z.boolean(),
  // Longer, and last_used_at could lag its last use by more than the contract's minute (shared/domain/credentials.ts).
  authorizerCacheTtlSeconds: z.int().check(
    z.minimum(0),
    z.maximum(AUTHORIZER_CACHE_TTL_SECONDS, `must be at most ${AUTHORIZER_CACHE_TTL_SECONDS}: with last_used_at written at most every 30 s, a longer cache lets it lag past a minute`),
  ),
  throttling: z.strictObject({ rateLimit: positive, burstLimit: positiveInteger }),
  alarms: z.strictObject({
    enabled: z.boolean(),
    email: z.optional(z.email()),
    serverErrorRatePercent: positive.check(z.maximum(100)),
    p99LatencyMs: positiveInteger,
  }),
  reservedConcurrency: z._default(z.record(z.string().check(z.regex(/^[a-z0-9-]+$/)), z.int().check(z.minimum(1))), {}),
  accountConcurrencyLimit: z._default(z.int().check(z.minimum(UNRESERVED_CONCURRENCY_MINIMUM)), DEFAULT_ACCOUNT_CONCURRENCY_LIMIT),
  credentialIssuers: roleArns,
  reportsInboxWriters: roleArns,
  reportsReaders: roleArns,
  paypalApiUrl: z.url({ protocol: /^https$/ }),
  webAcl: z._default(
    z.union([
      z.literal(false),
      z.strictObject({
        rateLimit: z._default(z.int().check(z.minimum(10), z.maximum(2_000_000_000)), DEFAULT_WEB_ACL.rateLimit),
        evaluationWindowSeconds: z._default(z.union([z.literal(60), z.literal(120), z.literal(300), z.literal(600)]), DEFAULT_WEB_ACL.evaluationWindowSeconds),
      }),
    ]),
    () => ({ ...DEFAULT_WEB_ACL }),
  ),
});

/**
 * The settings of environment `name` from the `environments` context object.
 * `overrides` are plain `-c key=value` context values: `alarmEmail` only.
 */
export function environmentSettings(
  name: string,
  environmentsContext: unknown,
  overrides: { alarmEmail?: string } = {},
): EnvironmentSettings {
  const all = z.record(z.string(), z.unknown()).safeParse(environmentsContext);
  if (!all.success) throw new Error('cdk.json context "environments" must be an object of environment settings');
  if (!/^[a-z][a-z0-9-]{0,15}$/.test(name)) throw new Error(`Environment name "${name}" must be 1-16 lower-case letters, digits or dashes`);
  if (!Object.hasOwn(all.data, name)) {
    throw new Error(`Unknown environment "${name}"; expected one of: ${Object.keys(all.data).join(', ')}`);
  }
  // zod/mini carries no messages of its own; operators read these, so the English ones are passed here.
  const parsed = settingsSchema.safeParse(all.data[name], { error: z.locales.en().localeError });
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    throw new Error(`Invalid settings for environment "${name}": ${issues}`);
  }
  const settings = parsed.data;
  const reserved = Object.values(settings.reservedConcurrency).reduce((sum, count) => sum + count, 0);
  if (settings.accountConcurrencyLimit - reserved < UNRESERVED_CONCURRENCY_MINIMUM) {
    throw new Error(`Invalid settings for environment "${name}": reservedConcurrency reserves ${reserved} of the account's ${settings.accountConcurrencyLimit} (accountConcurrencyLimit), leaving ${settings.accountConcurrencyLimit - reserved} unreserved; Lambda keeps at least ${UNRESERVED_CONCURRENCY_MINIMUM} unreserved and would refuse the deploy`);
  }
  const email = overrides.alarmEmail ?? settings.alarms.email;
  return {
    name,
    responseEnvironment: settings.responseEnvironment,
    logRetention: settings.logRetentionDays as RetentionDays,
    removalPolicy: settings.removalPolicy === 'retain' ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    deletionProtection: settings.deletionProtection,
    authorizerCacheTtl: Duration.seconds(settings.authorizerCacheTtlSeconds),
    throttling: settings.throttling,
    alarms: { ...settings.alarms, email },
    reservedConcurrency: settings.reservedConcurrency,
    accountConcurrencyLimit: settings.accountConcurrencyLimit,
    credentialIssuers: settings.credentialIssuers,
    reportsInboxWriters: settings.reportsInboxWriters,
    reportsReaders: settings.reportsReaders,
    paypalApiUrl: settings.paypalApiUrl,
    ...(settings.webAcl === false ? {} : { webAcl: settings.webAcl }),
  };
}
