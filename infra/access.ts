import { Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { RouteAccess, RouteDefinition } from '#shared/http/routes.ts';

/** What route functions may be bound to. */
export interface ServiceResources {
  readonly table: ITable;
  readonly documents: IBucket;
  readonly vaultKey: IKey;
}

type DocumentUsage = NonNullable<RouteAccess['documents']>[number];
type VaultUsage = NonNullable<RouteAccess['vault']>[number];

const TABLE_READ = ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:BatchGetItem'];
const TABLE_ACTIONS: Record<NonNullable<RouteAccess['table']>, string[]> = {
  read: TABLE_READ,
  // IAM has no TransactWriteItems action: each item of a transaction is authorized by its own
  // PutItem/UpdateItem/DeleteItem/ConditionCheckItem.
  write: [...TABLE_READ, 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem'],
};

const VAULT_ACTIONS: Record<VaultUsage, string[]> = {
  encrypt: ['kms:GenerateDataKey', 'kms:Encrypt'],
  decrypt: ['kms:Decrypt'],
};

/** S3 actions per usage, and the vault key usage SSE-KMS performs on the caller's behalf. */
const DOCUMENT_ACTIONS: Record<DocumentUsage, { s3: string[]; kms: string[] }> = {
  read: { s3: ['s3:GetObject'], kms: ['kms:Decrypt'] },
  write: { s3: ['s3:PutObject'], kms: ['kms:GenerateDataKey'] },
  // A presigned POST carries the signer's authority: the function needs what the upload needs.
  'presign-upload': { s3: ['s3:PutObject'], kms: ['kms:GenerateDataKey'] },
  delete: { s3: ['s3:DeleteObject'], kms: [] },
};

/** A route's declared access, plus what the platform itself needs for it. */
export function accessFor(route: RouteDefinition): RouteAccess {
  // Tenancy checks on secret routes read organization records.
  if (route.auth === 'secret' && !route.access.table) return { ...route.access, table: 'read' };
  return route.access;
}

/** Grants exactly what `access` declares and sets the environment variables that go with it. */
export function bindRoute(fn: LambdaFunction, access: RouteAccess, resources: ServiceResources): void {
  fn.addEnvironment('TABLE_NAME', resources.table.tableName);
  if (access.table) resources.table.grant(fn, ...TABLE_ACTIONS[access.table]);

  if (access.vault?.length) {
    fn.addEnvironment('VAULT_KEY_ID', resources.vaultKey.keyId);
    resources.vaultKey.grant(fn, ...unique(access.vault.flatMap((usage) => VAULT_ACTIONS[usage])));
  }

  if (access.documents?.length) {
    fn.addEnvironment('DOCUMENTS_BUCKET', resources.documents.bucketName);
    const usages = access.documents.map((usage) => DOCUMENT_ACTIONS[usage]);
    fn.addToRolePolicy(new PolicyStatement({
      actions: unique(usages.flatMap((usage) => usage.s3)),
      resources: [resources.documents.arnForObjects('*')],
    }));
    const keyActions = unique(usages.flatMap((usage) => usage.kms));
    if (keyActions.length) {
      // The bucket shares the vault key: through S3 only, so document access never opens account-number ciphertexts.
      fn.addToRolePolicy(new PolicyStatement({
        actions: keyActions,
        resources: [resources.vaultKey.keyArn],
        conditions: { StringEquals: { 'kms:ViaService': `s3.${Stack.of(fn).region}.amazonaws.com` } },
      }));
    }
  }
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
