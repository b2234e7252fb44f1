import { KmsSecretHasher } from '#shared/aws/credential-hasher.ts';
import { dynamo } from '#shared/aws/dynamodb.ts';
import { kms } from '#shared/aws/kms.ts';
import { config } from '#shared/runtime/config.ts';
import { DynamoAuthFailureCounter, DynamoCredentialStore } from '#shared/store/credentials.ts';
import { DynamoPublishableKeyStore } from '#shared/store/publishable-keys.ts';
import { once } from './once.ts';

/** What the request authorizer checks secret credentials and publishable keys against, and counts failures in. */
export const authenticationDeps = /* @__PURE__ */ once(() => ({
  credentials: new DynamoCredentialStore(dynamo, config.tableName),
  // Per container: its derived key is asked of KMS once.
  hasher: new KmsSecretHasher(kms, config.credentialMacKeyId),
  publishableKeys: new DynamoPublishableKeyStore(dynamo, config.tableName),
  failures: new DynamoAuthFailureCounter(dynamo, config.tableName),
}));
