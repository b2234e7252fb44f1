/**
 * Which environment variables a function gets, from what it may touch: the one
 * derivation CDK (infra/access.ts) and the local runtime (local/runtime.ts)
 * both use, so a handler that reads a variable its route did not declare fails
 * locally exactly as it would in AWS. Nothing here imports the AWS SDK or CDK.
 */
import type { BucketGrant } from './bucket-grants.ts';
import type { DynamoGrant } from './dynamodb-grants.ts';
import { hashesRequests } from './key-grants.ts';
import { TABLE_READ_ACTIONS } from './dynamodb-grants.ts';
import { REPORT_OBJECT_PREFIXES as REPORTS } from './names.ts';
import type { RouteAccess, RouteDefinition } from './routes.ts';
import type { QueueGrant } from './webhooks.ts';
import { WEBHOOK_QUEUE_GRANTS } from './webhooks.ts';

/** The variable names code, CDK and the local runtime agree on. */
export const ENVIRONMENT_VARIABLES = {
  environmentName: 'ENVIRONMENT_NAME',
  tableName: 'TABLE_NAME',
  tableIndexStandIns: 'TABLE_INDEX_STAND_INS',
  auHistoryTableName: 'AU_HISTORY_TABLE_NAME',
  webhookTableName: 'WEBHOOK_TABLE_NAME',
  documentsBucket: 'DOCUMENTS_BUCKET',
  documentsKmsKeyId: 'DOCUMENTS_KMS_KEY_ID',
  reportsBucket: 'REPORTS_BUCKET',
  eventBusName: 'EVENT_BUS_NAME',
  vaultKeyId: 'VAULT_KEY_ID',
  credentialMacKeyId: 'CREDENTIAL_MAC_KEY_ID',
  fingerprintKeyId: 'FINGERPRINT_KEY_ID',
  requestHashKeyId: 'REQUEST_HASH_KEY_ID',
  paypalApiUrl: 'PAYPAL_API_URL',
  paypalSecretArn: 'PAYPAL_SECRET_ARN',
  publicBaseUrl: 'PUBLIC_BASE_URL',
  s3ForcePathStyle: 'S3_FORCE_PATH_STYLE',
  webhookDeliveryQueueUrl: 'WEBHOOK_DELIVERY_QUEUE_URL',
  webhookAllowLoopback: 'WEBHOOK_ALLOW_LOOPBACK',
  webhookLaterRetryCapSeconds: 'WEBHOOK_LATER_RETRY_CAP_SECONDS',
} as const;

/** Where PayPal client credentials come from: a Secrets Manager secret, JSON {client_id, client_secret} (paypal-secret.ts). */
export interface PaypalCredentialSource {
  secretArn: string;
}

/** What a function may touch: a route's declared access, or the request authorizer's. */
export interface FunctionAccess extends RouteAccess {
  /** Hashes API secure keys with the credential HMAC key (the request authorizer). */
  credentialMac?: boolean;
  /** Reads and writes the Account Updater's files and reports (the reports bucket). */
  reports?: boolean;
  /** The Account Updater's history table (applied rows and month markers, for the monthly export). */
  auHistory?: 'read' | 'write';
  /** Publishes domain events to the event bus. */
  events?: boolean;
  /** Bucket grants of its own, besides those its `documents` usages imply (shared/platform/bucket-grants.ts). */
  s3?: readonly BucketGrant[];
  /**
   * DynamoDB grants of its own, in place of those `table` implies
   * (shared/platform/dynamodb-grants.ts): for functions whose actions are narrower than
   * a route's read or write, or that use the history table.
   */
  dynamodb?: readonly DynamoGrant[];
  /** The webhook queues it sends to or polls (shared/platform/webhooks.ts). */
  queues?: readonly QueueGrant[];
}

/**
 * The request authorizer reads credentials and publishable keys and hashes
 * secure keys. Its only writes: failed-authentication counters and
 * credentials' `last_used_at`, one UpdateItem each.
 */
export const AUTHORIZER_ACCESS: FunctionAccess = {
  table: 'read',
  credentialMac: true,
  dynamodb: [
    { table: 'table', actions: TABLE_READ_ACTIONS, indexes: true },
    { table: 'table', actions: ['UpdateItem'], items: ['authFailures', 'credential'] },
  ],
};

/**
 * Functions outside the route and S3 trigger tables, with what the stack gives
 * them (infra/account-updater.ts, infra/domain-events.ts): the local runtime
 * runs them in containers built from these.
 */
export const BACKGROUND_FUNCTION_ACCESS: Readonly<Record<string, FunctionAccess>> = {
  'au-check': {
    auHistory: 'write',
    reports: true,
    s3: [
      // The file's version the run pins (HeadObject is GetObject), then that version's bytes.
      { bucket: 'reports', actions: ['GetObject', 'GetObjectVersion'], prefixes: [REPORTS.inbox, REPORTS.runs] },
      // A refused file's summary; the run's ranges of lines, the map's items.
      { bucket: 'reports', actions: ['PutObject'], prefixes: [REPORTS.results, REPORTS.runs] },
    ],
    // Which execution took an upload, and when each file was first applied: puts if absent, and reads.
    dynamodb: [{ table: 'auHistory', actions: ['GetItem'] }, { table: 'auHistory', actions: ['PutItem'], items: ['auDelivery', 'auFile'] }],
  },
  'au-chunk': {
    table: 'write',
    auHistory: 'write',
    // Sealing a new number and opening the card's, only under the vault's own encryption context (shared/platform/key-grants.ts).
    vault: ['encrypt', 'decrypt'],
    // A new number gets a new fingerprint (it joins that fingerprint's duplicate-scope entry in the row's transaction).
    fingerprint: true,
    reports: true,
    s3: [
      // Its range of the file, in the version the check step read (au:apply uploads under au-runs/).
      { bucket: 'reports', actions: ['GetObject', 'GetObjectVersion'], prefixes: [REPORTS.inbox, REPORTS.runs] },
      // Its batch's result.
      { bucket: 'reports', actions: ['PutObject'], prefixes: [REPORTS.runs] },
    ],
    dynamodb: [
      // Cards read in batches; each applied row one conditional UpdateItem (a transaction of updates when a new number joins its duplicate-scope entry).
      { table: 'table', actions: ['BatchGetItem'] },
      { table: 'table', actions: ['UpdateItem'], items: ['paymethod', 'duplicateScope'] },
      // History items in batches, and the month marker; a re-applied file reads which of its items are missing.
      { table: 'auHistory', actions: ['BatchGetItem'] },
      { table: 'auHistory', actions: ['BatchWriteItem', 'PutItem'], items: ['auHistory', 'auMonth'] },
    ],
  },
  'au-merge': {
    reports: true,
    // Reads the run's batch results and writes the summary and the errors file.
    s3: [
      { bucket: 'reports', actions: ['ListBucket', 'GetObject'], prefixes: [REPORTS.runs] },
      { bucket: 'reports', actions: ['PutObject', 'AbortMultipartUpload'], prefixes: [REPORTS.results, REPORTS.runs] },
    ],
  },
  // The table too: months recorded before the history table existed are read where they were written.
  'au-export': {
    table: 'read',
    auHistory: 'read',
    reports: true,
    dynamodb: [{ table: 'auHistory', actions: ['Query'] }, { table: 'table', actions: ['Query'] }],
    // Streams each report as a multipart upload.
    s3: [{ bucket: 'reports', actions: ['PutObject', 'AbortMultipartUpload'], prefixes: [REPORTS.reports] }],
  },
  'events-publish': { events: true },
  // Intake -> lanes -> delivery queue: reads endpoints, writes lane entries (and settled ones for disabled endpoints),
  // parks behind a backlog (parked entries, the slots' backlog flags, and a slot taken and freed to wake one).
  'webhooks-fanout': {
    table: 'read',
    webhookDeliveries: { writes: ['webhookLane', 'webhookHeld', 'webhookParked', 'webhookSlot'], parks: true },
    queues: WEBHOOK_QUEUE_GRANTS['webhooks-fanout'],
  },
  // Delivery: opens secrets, takes slots, records attempts, moves messages, disables endpoints.
  'webhooks-send': {
    table: 'write',
    writes: ['webhookEndpoint'],
    webhookDeliveries: { writes: ['webhookLane', 'webhookHeld', 'webhookAttempt', 'webhookSlot', 'webhookParked'], parks: true },
    vault: ['decrypt'],
    webhookUrls: true,
    queues: WEBHOOK_QUEUE_GRANTS['webhooks-send'],
  },
};

/** A route's declared access, plus what the platform itself needs for it. */
export function accessFor(route: RouteDefinition): FunctionAccess {
  const queues = WEBHOOK_QUEUE_GRANTS[route.handler];
  const access: FunctionAccess = queues ? { ...route.access, queues } : route.access;
  // Tenancy checks on authenticated routes read organization records.
  if (route.auth !== 'none' && !access.table) return { ...access, table: 'read' };
  return access;
}

/**
 * The names (in CDK, tokens) of the resources a function may be bound to. Each
 * caller names what it has; asking for access to a resource it did not name
 * fails at synth (or at local start), not in the function.
 */
export interface FunctionResources {
  readonly tableName?: string;
  /** Which retired index stands in for which successor: empty (no variable) unless a deployed stack's indexes are upgraded. */
  readonly tableIndexStandIns?: string;
  readonly auHistoryTableName?: string;
  readonly webhookTableName?: string;
  readonly vaultKeyId?: string;
  readonly fingerprintKeyId?: string;
  /** The HMAC key of Idempotency-Key request hashes (functions that write idempotency records). */
  readonly requestHashKeyId?: string;
  readonly documentsBucket?: string;
  /** SSE-KMS key for document objects (the vault key; s3rver locally takes and ignores it). */
  readonly documentsKmsKeyId?: string;
  readonly credentialMacKeyId?: string;
  readonly reportsBucket?: string;
  readonly eventBusName?: string;
  readonly paypal?: { readonly apiUrl: string; readonly credentials: PaypalCredentialSource };
  readonly webhookDeliveryQueueUrl?: string;
  /** The local runtime's only: loopback receivers allowed, later retry steps shortened. A stack never sets it. */
  readonly webhookLocal?: { readonly allowLoopback: true; readonly laterRetryCapSeconds: number };
}

/** Exactly the variables `access` calls for: configuration a function was not granted is absent. */
export function functionEnvironment(access: FunctionAccess, resources: FunctionResources): Record<string, string> {
  const environment: Record<string, string> = {};
  const needs = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} access needs a resource the caller did not name`);
    return value;
  };
  if (access.table) environment[ENVIRONMENT_VARIABLES.tableName] = needs(resources.tableName, 'table');
  if (access.table && resources.tableIndexStandIns) environment[ENVIRONMENT_VARIABLES.tableIndexStandIns] = resources.tableIndexStandIns;
  if (access.auHistory) environment[ENVIRONMENT_VARIABLES.auHistoryTableName] = needs(resources.auHistoryTableName, 'auHistory');
  if (access.webhookDeliveries) environment[ENVIRONMENT_VARIABLES.webhookTableName] = needs(resources.webhookTableName, 'webhookDeliveries');
  if (access.vault?.length) environment[ENVIRONMENT_VARIABLES.vaultKeyId] = needs(resources.vaultKeyId, 'vault');
  if (access.fingerprint) environment[ENVIRONMENT_VARIABLES.fingerprintKeyId] = needs(resources.fingerprintKeyId, 'fingerprint');
  if (hashesRequests(access)) environment[ENVIRONMENT_VARIABLES.requestHashKeyId] = needs(resources.requestHashKeyId, 'requestHash');
  if (access.credentialMac) environment[ENVIRONMENT_VARIABLES.credentialMacKeyId] = needs(resources.credentialMacKeyId, 'credentialMac');
  if (access.paypal) {
    const { apiUrl, credentials } = needs(resources.paypal, 'paypal');
    environment[ENVIRONMENT_VARIABLES.paypalApiUrl] = apiUrl;
    environment[ENVIRONMENT_VARIABLES.paypalSecretArn] = credentials.secretArn;
  }
  if (access.documents?.length) {
    environment[ENVIRONMENT_VARIABLES.documentsBucket] = needs(resources.documentsBucket, 'documents');
    environment[ENVIRONMENT_VARIABLES.documentsKmsKeyId] = needs(resources.documentsKmsKeyId, 'documents');
  }
  if (access.reports) environment[ENVIRONMENT_VARIABLES.reportsBucket] = needs(resources.reportsBucket, 'reports');
  if (access.events) environment[ENVIRONMENT_VARIABLES.eventBusName] = needs(resources.eventBusName, 'events');
  if (access.queues?.some((grant) => grant.queue === 'delivery' && grant.actions.includes('SendMessage'))) {
    environment[ENVIRONMENT_VARIABLES.webhookDeliveryQueueUrl] = needs(resources.webhookDeliveryQueueUrl, 'webhook delivery queue');
  }
  if (access.webhookUrls && resources.webhookLocal) {
    environment[ENVIRONMENT_VARIABLES.webhookAllowLoopback] = 'true';
    environment[ENVIRONMENT_VARIABLES.webhookLaterRetryCapSeconds] = String(resources.webhookLocal.laterRetryCapSeconds);
  }
  return environment;
}
