import { Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { FunctionAccess, FunctionResources } from '#shared/function-environment.ts';
import { functionEnvironment } from '#shared/function-environment.ts';
import type { RouteAccess } from '#shared/http/routes.ts';
import { DOCUMENT_OBJECT_PREFIX, UPLOAD_OBJECT_PREFIX, VAULT_ENCRYPTION_PURPOSE } from '#shared/names.ts';
import { PAGE_BOUNDARY_KEY_PREFIX } from '#shared/store/keys.ts';
import { grantKeyUsage } from './keys.ts';

/** What route functions may be bound to. */
export interface ServiceResources {
  readonly table: ITable;
  /** Its global secondary indexes, named in grants one by one rather than as `index/*`. */
  readonly tableIndexNames: readonly string[];
  /** While an upgrade withholds new indexes: which retired index the functions read in place of each (table-indexes.ts). */
  readonly tableIndexStandIns?: string;
  readonly documents: IBucket;
  readonly vaultKey: IKey;
  /** HMAC key the paymethod fingerprint keys are derived from (docs/vault.md). */
  readonly fingerprintKey: IKey;
  readonly paypal: { readonly secret: ISecret; readonly apiUrl: string };
  /** The HMAC key that hashes API secure keys; only the request authorizer is bound to it. */
  readonly credentialMacKey?: IKey;
}

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
  // Envelope encryption: a data key per organization seals locally (KmsVault); kms:Encrypt is never called.
  encrypt: ['kms:GenerateDataKey'],
  decrypt: ['kms:Decrypt'],
};

/** S3 actions per usage, the key prefix they apply to, and the vault key usage SSE-KMS performs on the caller's behalf. */
/**
 * `list`: key prefixes the usage lists (s3:ListBucket, conditioned on them); '' is
 * the whole bucket, unconditioned, which is also what makes S3 answer a HEAD or GET
 * of a missing key with 404 rather than 403.
 */
const DOCUMENT_ACTIONS: Record<DocumentUsage, { s3: string[]; prefixes: string[]; kms: string[]; list?: string[] }> = {
  read: { s3: ['s3:GetObject'], prefixes: [DOCUMENT_OBJECT_PREFIX], kms: ['kms:Decrypt'] },
  write: { s3: ['s3:PutObject'], prefixes: [DOCUMENT_OBJECT_PREFIX], kms: ['kms:GenerateDataKey'] },
  // A presigned POST carries the signer's authority: the function needs what the upload needs, under uploads/ only.
  'presign-upload': { s3: ['s3:PutObject'], prefixes: [UPLOAD_OBJECT_PREFIX], kms: ['kms:GenerateDataKey'] },
  delete: { s3: ['s3:DeleteObject'], prefixes: [DOCUMENT_OBJECT_PREFIX], kms: [] },
  // Deleting a document whose upload session never finished removes the posted file too.
  'delete-upload': { s3: ['s3:DeleteObject'], prefixes: [UPLOAD_OBJECT_PREFIX], kms: [] },
  // Deleting a pending session finds the finalizer's checked copies, under documents/<org>/<doc>/, by listing.
  'list-copies': { s3: [], prefixes: [], kms: [], list: [DOCUMENT_OBJECT_PREFIX] },
  // The finalizer reads a posted file (HEAD, copy source) and removes it once copied or rejected.
  // A repeated event HEADs an upload already removed: it must read "gone" (404), not fail on a 403 into the dead-letter queue.
  'finalize-upload': { s3: ['s3:GetObject', 's3:DeleteObject'], prefixes: [UPLOAD_OBJECT_PREFIX], kms: ['kms:Decrypt'], list: [''] },
};

/**
 * Grants exactly what `access` declares and sets the environment variables that
 * go with it, as shared/function-environment.ts derives them (the local runtime
 * gives each handler the same).
 */
export function bindRoute(fn: LambdaFunction, access: FunctionAccess, resources: ServiceResources): void {
  setFunctionEnvironment(fn, access, {
    tableName: resources.table.tableName,
    tableIndexStandIns: resources.tableIndexStandIns,
    vaultKeyId: resources.vaultKey.keyArn,
    documentsBucket: resources.documents.bucketName,
    // Objects are written with SSE-KMS under the vault key; the bucket policy refuses another encryption or key.
    documentsKmsKeyId: resources.vaultKey.keyArn,
    fingerprintKeyId: resources.fingerprintKey.keyArn,
    ...(resources.credentialMacKey ? { credentialMacKeyId: resources.credentialMacKey.keyId } : {}),
    paypal: { apiUrl: resources.paypal.apiUrl, credentials: { secretArn: resources.paypal.secret.secretArn } },
  });

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
    // Only for vault data keys: the same key also encrypts documents through S3, which this grant does not open.
    grantKeyUsage(resources.vaultKey, fn, unique(access.vault.flatMap((usage) => VAULT_ACTIONS[usage])), {
      StringEquals: { 'kms:EncryptionContext:purpose': VAULT_ENCRYPTION_PURPOSE },
    });
  }

  if (access.fingerprint) grantKeyUsage(resources.fingerprintKey, fn, ['kms:GenerateMac']);

  if (access.credentialMac && resources.credentialMacKey) grantKeyUsage(resources.credentialMacKey, fn, ['kms:GenerateMac']);

  if (access.paypal) resources.paypal.secret.grantRead(fn);

  if (access.documents?.length) grantDocuments(fn, access.documents, resources);
}

/**
 * The variables `access` calls for, derived as the local runtime derives them
 * (shared/function-environment.ts): every function of the stack gets its
 * environment here, never by hand.
 */
export function setFunctionEnvironment(fn: LambdaFunction, access: FunctionAccess, resources: FunctionResources): void {
  for (const [name, value] of Object.entries(functionEnvironment(access, resources))) fn.addEnvironment(name, value);
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
  const listed = unique(usages.flatMap((usage) => DOCUMENT_ACTIONS[usage].list ?? []));
  if (listed.includes('')) {
    fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:ListBucket'], resources: [resources.documents.bucketArn] }));
  } else if (listed.length) {
    fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:ListBucket'], resources: [resources.documents.bucketArn], conditions: { StringLike: { 's3:prefix': listed.map((prefix) => `${prefix}*`) } } }));
  }
  grantKeyUsage(resources.vaultKey, fn, unique(usages.flatMap((usage) => DOCUMENT_ACTIONS[usage].kms)), {
    StringEquals: { 'kms:ViaService': `s3.${Stack.of(fn).region}.amazonaws.com` },
  });
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
