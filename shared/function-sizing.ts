/**
 * Function memory and timeouts, for the functions whose definition is not
 * itself a table entry: every function behind the API, and the Account
 * Updater's. S3 and stream triggers carry theirs (shared/events.ts). CDK
 * deploys these (infra/functions.ts); the local runtime hands each handler a
 * context reporting the same memory and counting down the same timeout
 * (local/lambda-context.ts), and runs the Account Updater with the heap
 * Lambda derives from that memory. Nothing here imports the AWS SDK or CDK.
 */
import { API_FUNCTION_TIMEOUT_SECONDS } from './aws/deadline.ts';

export interface FunctionSizing {
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
}

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
