import { KMSClient } from '@aws-sdk/client-kms';

/** Built once per container; the endpoint comes from AWS_ENDPOINT_URL_KMS when set. */
export const kms = new KMSClient({});
