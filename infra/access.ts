import { Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { DOCUMENT_OBJECT_PREFIX, UPLOAD_OBJECT_PREFIX } from '#shared/events.ts';
import { PAGE_BOUNDARY_KEY_PREFIX } from '#shared/store/keys.ts';
import type { RouteAccess, RouteDefinition } from '#shared/http/routes.ts';
import { grantKeyUsage } from './keys.ts';

/** What route functions may be bound to. */
export interface ServiceResources {
  readonly table: ITable;
  /** Its global secondary indexes, named in grants one by one rather than as `index/*`. */
  readonly tableIndexNames: readonly string[];
  readonly documents: IBucket;
  readonly vaultKey: IKey;
  /** HMAC key the paymethod fingerprint keys are derived from (docs/vault.md). */
  readonly fingerprintKey: IKey;
  readonly paypal: { readonly secret: ISecret; readonly apiUrl: string };
}

/** The vault seals only under this encryption-context purpose (shared/aws/kms-vault.ts). */
const VAULT_PURPOSE = 'paymethod-vault';

type DocumentUsage = NonNullable<RouteAccess['documents']>[number];
type VaultUsage = NonNullable<RouteAccess['vault']>[number];

const TABLE_READ = ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:BatchGetItem'];
/** Only Query reads an index; GetItem and BatchGetItem address the table. */
const INDEX_READ = ['dynamodb:Query'];
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

/** Stored documents live under this key prefix of the documents bucket. */
export const DOCUMENTS_PREFIX = DOCUMENT_OBJECT_PREFIX;
/** Upload sessions' files land here until the finalizer moves them; a lifecycle rule expires leftovers. */
export const UPLOADS_PREFIX = UPLOAD_OBJECT_PREFIX;

/** S3 actions per usage, the key prefix they apply to, and the vault key usage SSE-KMS performs on the caller's behalf. */
const DOCUMENT_ACTIONS: Record<DocumentUsage, { s3: string[]; prefixes: string[]; kms: string[] }> = {
  read: { s3: ['s3:GetObject'], prefixes: [DOCUMENTS_PREFIX], kms: ['kms:Decrypt'] },
  write: { s3: ['s3:PutObject'], prefixes: [DOCUMENTS_PREFIX], kms: ['kms:GenerateDataKey'] },
  // A presigned POST carries the signer's authority: the function needs what the upload needs, under uploads/ only.
  'presign-upload': { s3: ['s3:PutObject'], prefixes: [UPLOADS_PREFIX], kms: ['kms:GenerateDataKey'] },
  // Deleting a document whose upload session never finished removes the posted file too.
  delete: { s3: ['s3:DeleteObject'], prefixes: [DOCUMENTS_PREFIX, UPLOADS_PREFIX], kms: [] },
  // The finalizer reads a posted file (HEAD, ranged GET, copy source) and removes it once moved or rejected.
  'finalize-upload': { s3: ['s3:GetObject', 's3:DeleteObject'], prefixes: [UPLOADS_PREFIX], kms: ['kms:Decrypt'] },
};

/** A route's declared access, plus what the platform itself needs for it. */
export function accessFor(route: RouteDefinition): RouteAccess {
  // Tenancy checks on authenticated routes read organization records.
  if (route.auth !== 'none' && !route.access.table) return { ...route.access, table: 'read' };
  return route.access;
}

/** Grants exactly what `access` declares and sets the environment variables that go with it. */
export function bindRoute(fn: LambdaFunction, access: RouteAccess, resources: ServiceResources): void {
  fn.addEnvironment('TABLE_NAME', resources.table.tableName);
  if (access.table) grantTable(fn, TABLE_ACTIONS[access.table], resources);
  if (access.pageBoundaries) {
    // List functions stay read-only on records: they may only write page-boundary items.
    fn.addToRolePolicy(new PolicyStatement({
      actions: ['dynamodb:BatchWriteItem'],
      resources: [resources.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${PAGE_BOUNDARY_KEY_PREFIX}*`] } },
    }));
  }

  if (access.vault?.length) {
    fn.addEnvironment('VAULT_KEY_ID', resources.vaultKey.keyArn);
    // Only for vault data keys: the same key also encrypts documents through S3, which this grant does not open.
    grantKeyUsage(resources.vaultKey, fn, unique(access.vault.flatMap((usage) => VAULT_ACTIONS[usage])), {
      StringEquals: { 'kms:EncryptionContext:purpose': VAULT_PURPOSE },
    });
  }

  if (access.fingerprint) {
    fn.addEnvironment('FINGERPRINT_KEY_ID', resources.fingerprintKey.keyArn);
    grantKeyUsage(resources.fingerprintKey, fn, ['kms:GenerateMac']);
  }

  if (access.paypal) {
    fn.addEnvironment('PAYPAL_API_URL', resources.paypal.apiUrl);
    fn.addEnvironment('PAYPAL_SECRET_ARN', resources.paypal.secret.secretArn);
    resources.paypal.secret.grantRead(fn);
  }

  if (access.documents?.length) {
    fn.addEnvironment('DOCUMENTS_BUCKET', resources.documents.bucketName);
    // Objects are written with SSE-KMS under the vault key; the bucket policy refuses anything else.
    fn.addEnvironment('DOCUMENTS_KMS_KEY_ID', resources.vaultKey.keyArn);
    grantDocuments(fn, access.documents, resources);
  }
}

/** Table actions on the table, and Query on each index by name. */
export function grantTable(fn: LambdaFunction, actions: readonly string[], resources: Pick<ServiceResources, 'table' | 'tableIndexNames'>): void {
  const { table, tableIndexNames } = resources;
  fn.addToRolePolicy(new PolicyStatement({ actions: [...actions], resources: [table.tableArn] }));
  const indexActions = actions.filter((action) => INDEX_READ.includes(action));
  if (indexActions.length && tableIndexNames.length) {
    fn.addToRolePolicy(new PolicyStatement({
      actions: indexActions,
      resources: tableIndexNames.map((index) => `${table.tableArn}/index/${index}`),
    }));
  }
}

/**
 * S3 actions on the documents bucket, each on its own key prefix, and the vault
 * key usage SSE-KMS needs on the caller's behalf, through S3 only (document
 * access never opens account-number ciphertexts). Exported for functions that
 * are not routes, such as the upload finalizer.
 */
export function grantDocuments(fn: LambdaFunction, usages: readonly DocumentUsage[], resources: Pick<ServiceResources, 'documents' | 'vaultKey'>): void {
  const byPrefix = new Map<string, string[]>();
  for (const usage of usages) {
    const { s3, prefixes } = DOCUMENT_ACTIONS[usage];
    for (const prefix of prefixes) byPrefix.set(prefix, unique([...(byPrefix.get(prefix) ?? []), ...s3]));
  }
  for (const [prefix, actions] of byPrefix) {
    fn.addToRolePolicy(new PolicyStatement({ actions, resources: [resources.documents.arnForObjects(`${prefix}*`)] }));
  }
  grantKeyUsage(resources.vaultKey, fn, unique(usages.flatMap((usage) => DOCUMENT_ACTIONS[usage].kms)), {
    StringEquals: { 'kms:ViaService': `s3.${Stack.of(fn).region}.amazonaws.com` },
  });
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
