/**
 * Function memory and timeouts, for the functions whose definition is not
 * itself a table entry: every function behind the API, and the Account
 * Updater's. S3 and stream triggers carry theirs (shared/platform/triggers.ts). CDK
 * deploys these (infra/functions.ts); the local runtime hands each handler a
 * context reporting the same memory and counting down the same timeout
 * (local/lambda-context.ts), and runs the Account Updater with the heap
 * Lambda derives from that memory. Nothing here imports the AWS SDK or CDK.
 */

export interface FunctionSizing {
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
}

/** The contract: every answer, a 503 included, leaves within 10 s of the request's arrival. */
export const ANSWER_WITHIN_MS = 10_000;

/**
 * One deadline for the whole request, counted from its arrival at API Gateway
 * (`requestContext.requestTimeEpoch`, which the authorizer and the route's
 * function both receive), not one budget per invocation: the authorizer's run,
 * both cold starts and the route's retries all come out of the same 9 s, so they
 * cannot add up past it. The last second is for shaping the 503 and API
 * Gateway's way back. Normal requests use a few dozen milliseconds.
 */
export const REQUEST_BUDGET_MS = 9_000;
/**
 * The authorizer's own cap within the request's: its one GetItem and one
 * GenerateMac get a hundredfold headroom, and a stalled store or KMS fails it
 * (503) while the route still has most of the request's time.
 */
export const AUTHORIZER_BUDGET_MS = 2_000;
/**
 * Kept between the deadline and the function's own timeout, for the 503 to be
 * shaped and returned: the deadline always comes first.
 */
export const ANSWER_MARGIN_MS = 1_000;
/**
 * Lambda's timeout for API functions: a run never reaches it, as the deadline
 * comes at most 9 s after the invocation started; it only stops a run that
 * escaped the deadline (a bug), well before API Gateway's 29 s integration timeout.
 */
export const API_FUNCTION_TIMEOUT_SECONDS = 12;

/**
 * Every function behind the API: one per route, and the request authorizer.
 * The request deadline answers first (503 at worst); the timeout only stops a
 * run that escaped it, long before API Gateway's 29 s.
 */
export const API_FUNCTION_SIZING: FunctionSizing = { memoryMb: 512, timeoutSeconds: API_FUNCTION_TIMEOUT_SECONDS };

/**
 * The Account Updater's functions. A batch holds only its rows; the memory is
 * room for the SDK and V8, whose heap settings Lambda derives from it (the
 * local engine runs with the same: local/lambda-context.ts), and buys the CPU
 * a batch needs (1,024 MB is 0.58 of a vCPU; docs/account-updater.md).
 */
const JOB_MEMORY_MB = 1024;

/** A check pass over a 1,000,000-row file (about 60 MB) or a 1,000-row batch takes seconds; 5 minutes is slack, not a budget. */
const ACCOUNT_UPDATER_STEP: FunctionSizing = { memoryMb: JOB_MEMORY_MB, timeoutSeconds: 5 * 60 };

export const ACCOUNT_UPDATER_FUNCTION_SIZING = {
  'au-check': ACCOUNT_UPDATER_STEP,
  'au-chunk': ACCOUNT_UPDATER_STEP,
  'au-merge': ACCOUNT_UPDATER_STEP,
  // The export streams every organization's month in one invocation: Lambda's ceiling.
  'au-export': { memoryMb: JOB_MEMORY_MB, timeoutSeconds: 15 * 60 },
} as const satisfies Record<string, FunctionSizing>;

export type AccountUpdaterFunction = keyof typeof ACCOUNT_UPDATER_FUNCTION_SIZING;
