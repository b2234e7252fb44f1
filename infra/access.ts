import { Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { DynamoGrant } from '#shared/dynamodb-grants.ts';
import { dynamodbGrants, leadingKeyPatterns } from '#shared/dynamodb-grants.ts';
import type { FunctionAccess, FunctionResources } from '#shared/function-environment.ts';
import type { GrantedKey, KeyGrant } from '#shared/key-grants.ts';
import { keyGrants } from '#shared/key-grants.ts';
import { functionEnvironment } from '#shared/function-environment.ts';
import type { RouteAccess } from '#shared/http/routes.ts';
import { DOCUMENT_OBJECT_PREFIX, UPLOAD_OBJECT_PREFIX } from '#shared/names.ts';
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

  grantDynamo(fn, dynamodbGrants(access), resources);

  grantKeys(fn, keyGrants(access), { vault: resources.vaultKey, fingerprint: resources.fingerprintKey, credentialMac: resources.credentialMacKey });

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

/**
 * Each key grant (shared/key-grants.ts), the same grants the local KMS
 * stand-in enforces, in the role's policy and backed in the key's policy,
 * with its encryption context as a condition.
 */
export function grantKeys(fn: LambdaFunction, grants: readonly KeyGrant[], keys: Partial<Record<GrantedKey, IKey>>): void {
  for (const grant of grants) {
    const key = keys[grant.key];
    if (!key) throw new Error(`${fn.node.path}: a grant names the ${grant.key} key, which the caller did not pass`);
    const context = Object.entries(grant.encryptionContext ?? {});
    grantKeyUsage(key, fn, grant.actions.map((action) => `kms:${action}`), context.length ? { StringEquals: Object.fromEntries(context.map(([name, value]) => [`kms:EncryptionContext:${name}`, value])) } : undefined);
  }
}

/** The tables DynamoDB grants may name: the history table only for the Account Updater's functions. */
export interface GrantableTables {
  readonly table: ITable;
  /** Its global secondary indexes, named in grants one by one rather than as `index/*`. */
  readonly tableIndexNames: readonly string[];
  readonly auHistory?: ITable;
}

/**
 * One statement per grant (shared/dynamodb-grants.ts), the same grants the
 * local runtime enforces: its actions on its table, limited to its item kinds'
 * partition keys where it names them, and Query on each index by name where it
 * includes them.
 */
export function grantDynamo(fn: LambdaFunction, grants: readonly DynamoGrant[], tables: GrantableTables): void {
  for (const grant of grants) {
    const table = grant.table === 'table' ? tables.table : tables.auHistory;
    if (!table) throw new Error(`${fn.node.path}: a grant names the ${grant.table} table, which the caller did not pass`);
    fn.addToRolePolicy(new PolicyStatement({
      actions: grant.actions.map((action) => `dynamodb:${action}`),
      resources: [table.tableArn],
      ...(grant.items ? { conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': leadingKeyPatterns(grant.items) } } } : {}),
    }));
    // Only Query reads an index; GetItem and BatchGetItem address the table.
    if (grant.indexes && grant.actions.includes('Query') && grant.table === 'table' && tables.tableIndexNames.length) {
      fn.addToRolePolicy(new PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: tables.tableIndexNames.map((index) => `${table.tableArn}/index/${index}`),
      }));
    }
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
