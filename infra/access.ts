import { Stack } from 'aws-cdk-lib';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { QueueGrant, WebhookQueue } from '#shared/platform/webhooks.ts';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { BucketGrant, DocumentUsage, GrantedBucket } from '#shared/platform/bucket-grants.ts';
import { bucketGrants } from '#shared/platform/bucket-grants.ts';
import type { DynamoGrant } from '#shared/platform/dynamodb-grants.ts';
import { dynamodbGrants, leadingKeyPatterns } from '#shared/platform/dynamodb-grants.ts';
import type { FunctionAccess, FunctionResources } from '#shared/platform/function-environment.ts';
import type { GrantedKey, KeyGrant } from '#shared/platform/key-grants.ts';
import { keyGrants } from '#shared/platform/key-grants.ts';
import { functionEnvironment } from '#shared/platform/function-environment.ts';
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
  /** HMAC key the Idempotency-Key request hash key is derived from (docs/vault.md). */
  readonly requestHashKey: IKey;
  readonly paypal: { readonly secret: ISecret; readonly apiUrl: string };
  /** The HMAC key that hashes API secure keys; only the request authorizer is bound to it. */
  readonly credentialMacKey?: IKey;
  /** The webhook queues (infra/webhooks.ts), for functions with queue grants. */
  readonly webhookQueues?: Partial<Record<WebhookQueue, IQueue>>;
  /** The webhook deliveries table (shared/platform/table.ts WEBHOOK_TABLE_KEY), for the webhook functions. */
  readonly webhookDeliveries?: ITable;
}

/** The vault key usage SSE-KMS performs on a document function's behalf, per usage (through S3 only). */
const DOCUMENT_KMS_ACTIONS: Record<DocumentUsage, string[]> = {
  read: ['kms:Decrypt'],
  write: ['kms:GenerateDataKey'],
  'presign-upload': ['kms:GenerateDataKey'],
  delete: [],
  'delete-upload': [],
  'list-copies': [],
  'finalize-upload': ['kms:Decrypt'],
  retain: [],
  'purge-infected': [],
};

/**
 * Grants exactly what `access` declares and sets the environment variables that
 * go with it, as shared/platform/function-environment.ts derives them (the local runtime
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
    requestHashKeyId: resources.requestHashKey.keyArn,
    ...(resources.credentialMacKey ? { credentialMacKeyId: resources.credentialMacKey.keyId } : {}),
    paypal: { apiUrl: resources.paypal.apiUrl, credentials: { secretArn: resources.paypal.secret.secretArn } },
    ...(resources.webhookQueues?.delivery ? { webhookDeliveryQueueUrl: resources.webhookQueues.delivery.queueUrl } : {}),
    ...(resources.webhookDeliveries ? { webhookTableName: resources.webhookDeliveries.tableName } : {}),
  });

  grantDynamo(fn, dynamodbGrants(access), { ...resources, webhooks: resources.webhookDeliveries });

  grantKeys(fn, keyGrants(access), {
    vault: resources.vaultKey,
    fingerprint: resources.fingerprintKey,
    requestHash: resources.requestHashKey,
    credentialMac: resources.credentialMacKey,
  });

  if (access.paypal) resources.paypal.secret.grantRead(fn);

  if (access.documents?.length) grantDocuments(fn, access.documents, resources);

  if (access.queues?.length) grantQueues(fn, access.queues, resources.webhookQueues ?? {});
}

/** Queue grants (shared/platform/webhooks.ts), the data the local SQS stand-in enforces, as IAM statements on each queue. */
export function grantQueues(fn: LambdaFunction, grants: readonly QueueGrant[], queues: Partial<Record<WebhookQueue, IQueue>>): void {
  for (const grant of grants) {
    const queue = queues[grant.queue];
    if (!queue) throw new Error(`${fn.node.path}: a grant names the ${grant.queue} queue, which the caller did not pass`);
    queue.grant(fn, ...grant.actions.map((action) => `sqs:${action}`));
  }
}

/**
 * The variables `access` calls for, derived as the local runtime derives them
 * (shared/platform/function-environment.ts): every function of the stack gets its
 * environment here, never by hand.
 */
export function setFunctionEnvironment(fn: LambdaFunction, access: FunctionAccess, resources: FunctionResources): void {
  for (const [name, value] of Object.entries(functionEnvironment(access, resources))) fn.addEnvironment(name, value);
}

/**
 * Each key grant (shared/platform/key-grants.ts), the same grants the local KMS
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

/** The tables DynamoDB grants may name: the history table only for the Account Updater's functions, the deliveries table for the webhook functions. */
export interface GrantableTables {
  readonly table: ITable;
  /** Its global secondary indexes, named in grants one by one rather than as `index/*`. */
  readonly tableIndexNames: readonly string[];
  readonly auHistory?: ITable | undefined;
  readonly webhooks?: ITable | undefined;
}

/**
 * One statement per grant (shared/platform/dynamodb-grants.ts), the same grants the
 * local runtime enforces: its actions on its table, limited to its item kinds'
 * partition keys where it names them, and Query on each index by name where it
 * includes them.
 */
export function grantDynamo(fn: LambdaFunction, grants: readonly DynamoGrant[], tables: GrantableTables): void {
  for (const grant of grants) {
    const table = { table: tables.table, auHistory: tables.auHistory, webhooks: tables.webhooks }[grant.table];
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
 * The documents bucket's grants for these usages (shared/platform/bucket-grants.ts, the
 * same the local runtime enforces), and the vault key usage SSE-KMS needs on
 * the caller's behalf, through S3 only (document access never opens
 * account-number ciphertexts).
 */
export function grantDocuments(fn: LambdaFunction, usages: readonly DocumentUsage[], resources: Pick<ServiceResources, 'documents' | 'vaultKey'>): void {
  grantBuckets(fn, bucketGrants({ documents: usages }), { documents: resources.documents });
  grantKeyUsage(resources.vaultKey, fn, unique(usages.flatMap((usage) => DOCUMENT_KMS_ACTIONS[usage])), {
    StringEquals: { 'kms:ViaService': `s3.${Stack.of(fn).region}.amazonaws.com` },
  });
}

/**
 * Bucket grants as statements: each set of prefixes its object actions (one
 * statement per set, so grants on the same prefixes share one), and ListBucket
 * on the bucket, conditioned on the listed prefixes unless one is the whole
 * bucket.
 */
export function grantBuckets(fn: LambdaFunction, grants: readonly BucketGrant[], buckets: Partial<Record<GrantedBucket, IBucket>>): void {
  const bucketOf = (name: GrantedBucket) => {
    const bucket = buckets[name];
    if (!bucket) throw new Error(`${fn.node.path}: a grant names the ${name} bucket, which the caller did not pass`);
    return bucket;
  };
  const objectStatements = new Map<string, { bucket: GrantedBucket; prefixes: readonly string[]; actions: Set<string> }>();
  const listed = new Map<GrantedBucket, Set<string>>();
  for (const grant of grants) {
    const objectActions = grant.actions.filter((action) => action !== 'ListBucket');
    if (objectActions.length) {
      const id = `${grant.bucket} ${grant.prefixes.join(' ')}`;
      const statement = objectStatements.get(id) ?? { bucket: grant.bucket, prefixes: grant.prefixes, actions: new Set<string>() };
      for (const action of objectActions) statement.actions.add(`s3:${action}`);
      objectStatements.set(id, statement);
    }
    if (grant.actions.includes('ListBucket')) listed.set(grant.bucket, new Set([...(listed.get(grant.bucket) ?? []), ...grant.prefixes]));
  }
  for (const { bucket, prefixes, actions } of objectStatements.values()) {
    fn.addToRolePolicy(new PolicyStatement({ actions: [...actions], resources: prefixes.map((prefix) => bucketOf(bucket).arnForObjects(`${prefix}*`)) }));
  }
  for (const [bucket, prefixes] of listed) {
    const whole = prefixes.has('');
    fn.addToRolePolicy(new PolicyStatement({
      actions: ['s3:ListBucket'],
      resources: [bucketOf(bucket).bucketArn],
      ...(whole ? {} : { conditions: { StringLike: { 's3:prefix': [...prefixes].map((prefix) => `${prefix}*`) } } }),
    }));
  }
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
