import { KmsSecretHasher } from '#shared/aws/credential-hasher.ts';
import { dynamo } from '#shared/aws/dynamodb.ts';
import { kms } from '#shared/aws/kms.ts';
import { config } from '#shared/runtime/config.ts';
import { DynamoCredentialStore } from '#shared/store/credentials.ts';
import { DynamoOrganizationStore } from '#shared/store/organizations.ts';
import { DynamoPublishableKeyStore } from '#shared/store/publishable-keys.ts';

export function adminDependencies() {
  return {
    organizations: new DynamoOrganizationStore(dynamo, config.tableName),
    credentials: new DynamoCredentialStore(dynamo, config.tableName),
    hasher: new KmsSecretHasher(kms, config.credentialMacKeyId),
    publishableKeys: new DynamoPublishableKeyStore(dynamo, config.tableName),
  };
}
