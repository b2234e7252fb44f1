import { S3Client } from '@aws-sdk/client-s3';
import { config } from '#shared/config.ts';
import { tracer } from '#shared/observability/tracer.ts';

/** Built once per container; the endpoint comes from AWS_ENDPOINT_URL_S3 when set. Traced in Lambda. */
export const s3 = tracer.captureAWSv3Client(new S3Client({ forcePathStyle: config.s3ForcePathStyle }));
