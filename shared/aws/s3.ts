import { S3Client } from '@aws-sdk/client-s3';
import { config } from '#shared/runtime/config.ts';
import { S3_BUDGET, awsClient } from './client-config.ts';

export const s3 = /* @__PURE__ */ awsClient(S3Client, 'S3', S3_BUDGET, () => ({ forcePathStyle: config.s3ForcePathStyle }));
