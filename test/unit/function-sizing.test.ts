import { describe, expect, it } from 'vitest';
import { s3Triggers, streamTriggers } from '#shared/platform/triggers.ts';
import { BACKGROUND_FUNCTION_ACCESS } from '#shared/platform/function-environment.ts';
import type { FunctionSizing } from '#shared/platform/function-sizing.ts';
import { ACCOUNT_UPDATER_FUNCTION_SIZING, API_FUNCTION_SIZING } from '#shared/platform/function-sizing.ts';
import { lambdaContext } from '../../local/lambda-context.ts';

const triggerSizing = (handler: string): FunctionSizing => [...s3Triggers, ...streamTriggers].find((trigger) => trigger.handler === handler)!.sizing;

// CDK deploys these sizes (test/infra pins the template's values); locally, each handler's context reports the same.
describe('function sizing', () => {
  it('sizes every Account Updater function the stack deploys', () => {
    const accountUpdater = Object.keys(BACKGROUND_FUNCTION_ACCESS).filter((name) => name.startsWith('au-'));
    expect(Object.keys(ACCOUNT_UPDATER_FUNCTION_SIZING).sort()).toEqual(accountUpdater.sort());
  });

  it.each([
    ['paymethods-create-customer', API_FUNCTION_SIZING, 512, 12],
    ['documents-finalize', triggerSizing('documents-finalize'), 512, 60],
    ['events-publish', triggerSizing('events-publish'), 256, 60],
    ['au-chunk', ACCOUNT_UPDATER_FUNCTION_SIZING['au-chunk'], 1024, 300],
    ['au-export', ACCOUNT_UPDATER_FUNCTION_SIZING['au-export'], 1024, 900],
  ])('gives %s locally the context Lambda gives it', (name, sizing, memoryMb, timeoutSeconds) => {
    const context = lambdaContext(name, sizing);
    expect(context.memoryLimitInMB).toBe(String(memoryMb));
    const remaining = context.getRemainingTimeInMillis();
    expect(remaining).toBeLessThanOrEqual(timeoutSeconds * 1000);
    expect(remaining).toBeGreaterThan(timeoutSeconds * 1000 - 5_000);
  });
});
