/**
 * Names the code and the stack's IAM policies must agree on. If one side
 * drifted, the mismatch would only show in AWS (a KMS call or an S3 write
 * refused), so both sides import them from here. No imports: CDK, the domain
 * and the adapters all read this module.
 */

/** The vault seals and opens only under this encryption-context purpose; key grants are conditioned on it. */
export const VAULT_ENCRYPTION_PURPOSE = 'paymethod-vault';

/** Where accepted files live, one key per document: `documents/<org>/<doc>`. Grants are scoped to it. */
export const DOCUMENT_OBJECT_PREFIX = 'documents/';
/** Upload sessions post their file under this prefix; finalized files move to DOCUMENT_OBJECT_PREFIX. */
export const UPLOAD_OBJECT_PREFIX = 'uploads/';

/**
 * The reports bucket's folders: files dropped for the Account Updater, each
 * run's batch results, the runs' summaries, the monthly exports. Grants are
 * scoped to them.
 */
export const REPORT_OBJECT_PREFIXES = { inbox: 'au-inbox/', runs: 'au-runs/', results: 'au-results/', reports: 'au-reports/' } as const;

/** EventBridge sources of the domain events (docs/events.md); the stack's example rule matches on them. */
export const EVENT_SOURCES = { paymethods: 'payments.paymethods', documents: 'payments.documents' } as const;

/**
 * How long API Gateway (cdk.json's authorizerCacheTtlSeconds, which synth
 * refuses above this) and the local emulator keep an authorizer's answer: the
 * authorizer stamps last_used_at only when it runs, so this and
 * LAST_USED_RESOLUTION_MS (shared/domain/credentials.ts) add up to how far
 * last_used_at may lag the last use (the contract: up to a minute). It also
 * bounds how long a cached answer outlives a revocation whose flush failed,
 * or an address's failed-authentication throttle.
 */
export const AUTHORIZER_CACHE_TTL_SECONDS = 30;

/** EventBridge detail-type -> webhook event type (docs/webhooks.md); the webhook rule matches these detail-types. */
export const WEBHOOK_EVENT_TYPES = {
  'Paymethod Created': 'paymethod.created',
  'Paymethod Updated': 'paymethod.updated',
  'Paymethod Deleted': 'paymethod.deleted',
  'Paymethod Account Updated': 'paymethod.account_updated',
  'Document Created': 'document.created',
  'Document Rejected': 'document.rejected',
  // Published once document scanning lands; mapped already so endpoints can subscribe to it.
  'Document Scanned': 'document.scanned',
  'Document Deleted': 'document.deleted',
} as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[keyof typeof WEBHOOK_EVENT_TYPES];
/** Sent only by the ping route, whatever an endpoint's event_types say. */
export const PING_EVENT_TYPE = 'webhook.ping';
