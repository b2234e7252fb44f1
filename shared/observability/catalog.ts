/**
 * Names shared by the code that emits metrics and the CDK code that alarms on
 * and graphs them. Nothing here imports Powertools or the SDK, so the CDK app can
 * read it.
 *
 * Dimensions are bounded on purpose: every metric carries `service` and
 * `environment` (one value each per stack), route metrics add `route` (the
 * route's handler name, one per route table entry), business metrics add the
 * dimensions declared below, whose values come from closed enumerations. No
 * organization, customer, request or record id ever becomes a dimension.
 */

/** CloudWatch namespace of every custom metric (POWERTOOLS_METRICS_NAMESPACE). */
export const METRICS_NAMESPACE = 'PaymentsApi';
/** POWERTOOLS_SERVICE_NAME; Powertools adds it to every metric as the `service` dimension. */
export const SERVICE_NAME = 'payments-api';

/** Emitted once per API invocation by the middleware stack, with `route` = the route's handler name. */
export const ROUTE_METRICS = {
  requests: 'Requests',
  clientErrors: 'ClientErrors',
  serverErrors: 'ServerErrors',
  latency: 'Latency',
} as const;

/** Emitted by the request authorizer when a caller's credentials are refused (401, or 429 while its address is throttled). */
export const AUTHENTICATION_REFUSED_METRIC = 'AuthenticationRefusals';

/**
 * Emitted by the request authorizer for each refusal it answers by throwing
 * 'Unauthorized', API Gateway's signal for a 401: a Lambda error by design,
 * which the authorizer's error alarm subtracts.
 */
export const AUTHORIZER_UNAUTHORIZED_METRIC = 'AuthorizerUnauthorizedErrors';

/**
 * Business metrics the features emit through `recordBusinessMetric`. A name and
 * its dimension names are fixed here; adding one is a reviewed change, which is
 * what keeps the dimension count (and the CloudWatch bill) bounded.
 */
export const BUSINESS_METRICS = {
  /** A paymethod was created; `paymethod_type` is card, echeck or vendor. */
  PaymethodsCreated: { unit: 'Count', dimensions: ['paymethod_type'] },
  /** A document was stored (single request or finalized upload); `document_type` is jpeg, png, tiff, bmp, txt, wav or mp3. */
  DocumentsStored: { unit: 'Count', dimensions: ['document_type'] },
  /** An upload session's file was refused by the finalizer; `reason` is a fixed code (type_mismatch, too_large, empty, ...). */
  DocumentsRejected: { unit: 'Count', dimensions: ['reason'] },
  /** A stored file's malware scan ended; `scan_status` is clean, infected or failed. */
  DocumentsScanned: { unit: 'Count', dimensions: ['scan_status'] },
  /** A malware scan that could not decide (alarmed on; see alarmOnDocumentScanFailures). */
  DocumentScanFailures: { unit: 'Count', dimensions: [] },
  /** Account Updater rows applied to stored paymethods; `au_code` is new, exp, cls or con. */
  AccountUpdaterRowsApplied: { unit: 'Count', dimensions: ['au_code'] },
  /** An Account Updater export run failed (alarmed on; see alarmOnAccountUpdaterExportFailure). */
  AccountUpdaterExportFailures: { unit: 'Count', dimensions: [] },
} as const satisfies Record<string, { unit: 'Count'; dimensions: readonly string[] }>;

export type BusinessMetricName = keyof typeof BUSINESS_METRICS;
export type BusinessMetricDimensions<Name extends BusinessMetricName> = Record<
  (typeof BUSINESS_METRICS)[Name]['dimensions'][number],
  string
>;
