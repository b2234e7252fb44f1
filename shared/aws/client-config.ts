import type { AwsCredentialIdentity, AwsCredentialIdentityProvider, MetadataBearer, MiddlewareStack } from '@smithy/types';
import { currentContainer } from '#shared/runtime/container.ts';
import { tracer } from '#shared/observability/tracer.ts';
import { DeadlineExceeded, remainingMs } from '../runtime/deadline.ts';
import { EARLIER_ATTEMPT_MAY_HAVE_APPLIED, attemptMayHaveBeenApplied } from '../runtime/outcome.ts';

/**
 * Timeouts and retries of one AWS client. Each attempt is bounded by
 * `connectionTimeoutMs` to connect and `socketTimeoutMs` of silence (and
 * `requestTimeoutMs` in all); `maxAttempts` counts the first try. The request
 * deadline (shared/runtime/deadline.ts) bounds the sum, so these only need to keep one stall
 * from eating the whole budget and leave room for one retry.
 */
export interface CallBudget {
  connectionTimeoutMs: number;
  socketTimeoutMs: number;
  requestTimeoutMs: number;
  maxAttempts: number;
}

/**
 * Same region, single-digit-millisecond p99 on a warm connection: a second
 * without a connection or two without a byte is a stall, not load. Three
 * silent attempts (6 s plus backoff) still fit the 7.5 s request budget;
 * DynamoDB's throttling retries are what the third is for. Transactions carry
 * a ClientRequestToken, so retrying one that landed is answered as a success.
 */
export const DYNAMODB_BUDGET: CallBudget = { connectionTimeoutMs: 1_000, socketTimeoutMs: 2_000, requestTimeoutMs: 3_000, maxAttempts: 3 };
/** KMS answers in tens of milliseconds; its own p99 under quota pressure is below a second. */
export const KMS_BUDGET: CallBudget = { connectionTimeoutMs: 1_000, socketTimeoutMs: 2_000, requestTimeoutMs: 3_000, maxAttempts: 2 };
/** Secrets Manager is read once per container, on a PayPal create's path: the same bounds as KMS. */
export const SECRETS_MANAGER_BUDGET: CallBudget = KMS_BUDGET;
/**
 * S3 carries up to 4.7 MB in one PutObject: the socket timeout is on silence,
 * so a slow but moving upload is not cut; the total is bounded by the request deadline.
 */
export const S3_BUDGET: CallBudget = { connectionTimeoutMs: 1_000, socketTimeoutMs: 3_000, requestTimeoutMs: 6_000, maxAttempts: 2 };

/**
 * PutEvents answers in tens of milliseconds. The publisher runs on the
 * table's stream, under no request deadline: without a budget a silent
 * connection would hold the stream's shard until the function timed out;
 * with it the batch fails within seconds and the stream delivers it again
 * (event ids unchanged, so consumers deduplicate).
 */
export const EVENTBRIDGE_BUDGET: CallBudget = { connectionTimeoutMs: 1_000, socketTimeoutMs: 2_000, requestTimeoutMs: 3_000, maxAttempts: 3 };

/**
 * The one way the service builds an AWS client, built once per container:
 * the call budget, no SDK logger, the request deadline on every attempt
 * (inert where no deadline is set, as on the stream's event publisher) and
 * X-Ray subsegments in Lambda. The endpoint comes from AWS_ENDPOINT_URL_<SERVICE>
 * when set. Callers mark the call pure, so esbuild drops the client from
 * bundles whose handler never uses it; `options` is a function because
 * esbuild keeps a pure call whose arguments read a property.
 */
export function awsClient<C extends { middlewareStack: unknown; config: unknown }, O extends object = object>(
  Client: new (options: O & ReturnType<typeof clientBudget>) => C,
  dependency: string,
  budget: CallBudget,
  options?: () => O,
): C {
  const client = new Client({ ...(options?.() as O), ...clientBudget(budget), extensions: [functionCredentials] });
  return tracer.captureAWSv3Client(applyRequestDeadline(withoutSdkLogger(client), dependency));
}

/**
 * Each call is signed with the credentials of the function it is made for:
 * those its container's environment holds (AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, as Lambda sets them), read at each
 * call, else the SDK's default chain (a CLI with a profile). In Lambda the
 * container is the process, whose environment the default chain reads first
 * anyway; the local runtime runs every function in one process, each in its
 * own container with its own credentials, and its endpoints tell functions
 * apart by them (a presigned URL or form carries its signer's grants).
 */
const functionCredentials = {
  configure(configuration: { credentials(): unknown; setCredentials(credentials: AwsCredentialIdentityProvider): void }): void {
    const fallback = configuration.credentials() as AwsCredentialIdentity | AwsCredentialIdentityProvider;
    const provider: AwsCredentialIdentityProvider = async (properties) => containerCredentials() ?? (typeof fallback === 'function' ? fallback(properties) : fallback);
    // The SDK keeps the first identity a provider gives unless the provider says it caches its own (the
    // fallback does; the container's is read at each call, as it must be) and needs no caller configuration.
    configuration.setCredentials(Object.assign(provider, { memoized: true, configBound: true }));
  },
};

function containerCredentials(): AwsCredentialIdentity | undefined {
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_SESSION_TOKEN: sessionToken } = currentContainer().environment;
  return accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } : undefined;
}

/** Client configuration for a budget (`requestHandler` as options: the SDK builds its Node handler from them). */
export function clientBudget(budget: CallBudget) {
  return {
    maxAttempts: budget.maxAttempts,
    retryMode: 'standard',
    requestHandler: {
      connectionTimeout: budget.connectionTimeoutMs,
      socketTimeout: budget.socketTimeoutMs,
      requestTimeout: budget.requestTimeoutMs,
      throwOnRequestTimeout: true,
    },
  } as const;
}

/**
 * Takes the SDK's logger middleware out of a client. The service logs through
 * its own logger and never gives the SDK one, so the SDK's default logger
 * discards everything; the middleware still builds a redacted copy of every
 * request and response for it, walking each against the operation's schema.
 * On the Account Updater's apply that copying was about an eighth of all the
 * memory allocated (a sampled profile), and V8 ran an eighth fewer young
 * collections without it.
 */
export function withoutSdkLogger<T extends { middlewareStack: unknown }>(client: T): T {
  (client.middlewareStack as MiddlewareStack<object, MetadataBearer>).remove('loggerMiddleware');
  return client;
}

/**
 * Applies the request deadline to every attempt of every call of a client:
 * runs after the retry middleware, so an attempt (first or retry) past the
 * deadline is never sent, and one still waiting at the deadline is given up.
 * It also marks a failure whose earlier attempt may have been applied
 * (shared/runtime/outcome.ts), since the SDK only reports the last attempt's error.
 */
export function applyRequestDeadline<T extends { middlewareStack: unknown }>(client: T, dependency: string): T {
  (client.middlewareStack as MiddlewareStack<object, MetadataBearer>).add(
    (next, context) => async (args) => {
      const attempts = context as { earlierAttemptMayHaveApplied?: boolean };
      const left = remainingMs();
      let timer: NodeJS.Timeout | undefined;
      try {
        if (left === undefined) return await next(args);
        if (left <= 0) throw new DeadlineExceeded(false, dependency);
        const deadline = new Promise<never>((_resolve, reject) => {
          timer = setTimeout(() => reject(new DeadlineExceeded(true, dependency)), left);
        });
        return await Promise.race([next(args), deadline]);
      } catch (error) {
        if (error instanceof Error) {
          const earlier = attempts.earlierAttemptMayHaveApplied === true;
          Object.assign(error, { [EARLIER_ATTEMPT_MAY_HAVE_APPLIED]: earlier });
          attempts.earlierAttemptMayHaveApplied = earlier || attemptMayHaveBeenApplied(error);
        }
        throw error;
      } finally {
        clearTimeout(timer);
      }
    },
    { step: 'finalizeRequest', priority: 'low', name: 'requestDeadline', override: true },
  );
  return client;
}

/** SQS answers in milliseconds; a queue call that stalls fails fast so the message is received again. */
export const SQS_BUDGET: CallBudget = { connectionTimeoutMs: 1_000, socketTimeoutMs: 2_000, requestTimeoutMs: 3_000, maxAttempts: 3 };
