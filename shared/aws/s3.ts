import { S3Client } from '@aws-sdk/client-s3';
import { config } from '#shared/config.ts';
import { tracer } from '#shared/observability/tracer.ts';
import { S3_BUDGET, applyRequestDeadline, clientBudget, withoutSdkLogger } from './client-config.ts';

/**
 * Marked pure so esbuild drops the client from bundles whose handler never uses it.
 * Built once per container; the endpoint comes from AWS_ENDPOINT_URL_S3 when set. Traced in Lambda;
 * bounded by the client budget and the request deadline (client-config.ts).
 */
export const s3 = /* @__PURE__ */ tracer.captureAWSv3Client(
  /* @__PURE__ */ applyRequestDeadline(/* @__PURE__ */ withoutSdkLogger(/* @__PURE__ */ new S3Client(/* @__PURE__ */ clientConfig())), 'S3'),
);

// A call rather than an inline `config.s3ForcePathStyle`: esbuild keeps a pure call whose arguments read a property.
function clientConfig() {
  return { forcePathStyle: config.s3ForcePathStyle, ...clientBudget(S3_BUDGET) };
}
