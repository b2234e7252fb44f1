import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { tracer } from '#shared/observability/tracer.ts';
import { EVENTBRIDGE_BUDGET, clientBudget, withoutSdkLogger } from './client-config.ts';

/**
 * Marked pure so esbuild drops the client from bundles whose handler never uses it.
 * Built once per container, with its call budget; the endpoint comes from AWS_ENDPOINT_URL_EVENTBRIDGE when set. Traced in Lambda.
 */
export const eventBridge = /* @__PURE__ */ tracer.captureAWSv3Client(/* @__PURE__ */ withoutSdkLogger(/* @__PURE__ */ new EventBridgeClient(/* @__PURE__ */ clientBudget(EVENTBRIDGE_BUDGET))));
