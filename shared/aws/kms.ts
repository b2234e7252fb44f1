import { KMSClient } from '@aws-sdk/client-kms';
import { tracer } from '#shared/observability/tracer.ts';

/** Built once per container; the endpoint comes from AWS_ENDPOINT_URL_KMS when set. Traced in Lambda. */
export const kms = tracer.captureAWSv3Client(new KMSClient({}));
