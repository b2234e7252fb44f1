import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import type { FunctionSizing } from '#shared/platform/function-sizing.ts';

export const LOCAL_ACCOUNT_ID = '000000000000';

/**
 * The V8 heap settings Lambda's Node.js runtime starts a function of
 * `memoryMb` with (its bootstrap passes them to node): a tenth of the memory
 * for the young generation, in two semi-spaces, the rest for the old one.
 * Node's own defaults follow the machine's memory instead, and on a large
 * machine let the heap grow far past what the function's would.
 */
export function lambdaHeapFlags(memoryMb: number): string[] {
  const youngMb = Math.floor(memoryMb / 10);
  return [`--max-semi-space-size=${Math.floor(youngMb / 2)}`, `--max-old-space-size=${memoryMb - youngMb}`];
}

/** The context object Lambda passes a function sized `sizing`: its memory, and its timeout counting down from now. */
export function lambdaContext(functionName: string, sizing: FunctionSizing): Context {
  const { memoryMb, timeoutSeconds } = sizing;
  const deadline = Date.now() + timeoutSeconds * 1000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:${LOCAL_ACCOUNT_ID}:function:${functionName}`,
    memoryLimitInMB: String(memoryMb),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}
