import { KMSClient } from '@aws-sdk/client-kms';
import { tracer } from '#shared/observability/tracer.ts';
import { KMS_BUDGET, applyRequestDeadline, clientBudget, withoutSdkLogger } from './client-config.ts';

/**
 * Marked pure so esbuild drops the client from bundles whose handler never uses it.
 * Built once per container; the endpoint comes from AWS_ENDPOINT_URL_KMS when set. Traced in Lambda;
 * bounded by the client budget and the request deadline (client-config.ts). */
export const kms = /* @__PURE__ */ tracer.captureAWSv3Client(/* @__PURE__ */ applyRequestDeadline(/* @__PURE__ */ withoutSdkLogger(/* @__PURE__ */ new KMSClient(/* @__PURE__ */ clientBudget(KMS_BUDGET))), 'KMS'));
