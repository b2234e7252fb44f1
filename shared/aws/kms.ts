import { KMSClient } from '@aws-sdk/client-kms';
import { KMS_BUDGET, awsClient } from './client-config.ts';

export const kms = /* @__PURE__ */ awsClient(KMSClient, 'KMS', KMS_BUDGET);
