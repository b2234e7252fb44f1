import { S3Client } from '@aws-sdk/client-s3';
import { config } from '#shared/config.ts';

/** Built once per container; the endpoint comes from AWS_ENDPOINT_URL_S3 when set. */
export const s3 = new S3Client({ forcePathStyle: config.s3ForcePathStyle });
