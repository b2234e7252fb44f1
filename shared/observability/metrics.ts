import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { AUTHENTICATION_REFUSED_METRIC, BUSINESS_METRICS, METRICS_NAMESPACE, ROUTE_METRICS, SERVICE_NAME } from './catalog.ts';
import type { BusinessMetricDimensions, BusinessMetricName } from './catalog.ts';

export { BUSINESS_METRICS } from './catalog.ts';
export type { BusinessMetricName } from './catalog.ts';

/**
 * Metrics go to stdout in CloudWatch Embedded Metric Format, which Lambda ships
 * with the logs: no API call, no extra latency. POWERTOOLS_METRICS_DISABLED=true
 * (set by the local runtime) turns them off without changing handler code.
 *
 * Built on first use rather than at import, so the environment the local
 * runtime applies before loading a handler is the one that counts.
 */
let instance: Metrics | undefined;
function metrics(): Metrics {
  instance ??= new Metrics({
    namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? METRICS_NAMESPACE,
    serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? SERVICE_NAME,
    defaultDimensions: { environment: process.env.ENVIRONMENT_NAME ?? 'local' },
  });
  return instance;
}

export interface RequestOutcome {
  /** The route's handler name: one value per route table entry. */
  route: string;
  statusCode: number;
  durationMs: number;
}

/** Count, 4xx, 5xx and latency of one API request, flushed as one EMF line. */
export function recordRequest({ route, statusCode, durationMs }: RequestOutcome): void {
  const m = metrics();
  m.addDimension('route', route);
  m.addMetric(ROUTE_METRICS.requests, MetricUnit.Count, 1);
  m.addMetric(ROUTE_METRICS.clientErrors, MetricUnit.Count, statusCode >= 400 && statusCode < 500 ? 1 : 0);
  m.addMetric(ROUTE_METRICS.serverErrors, MetricUnit.Count, statusCode >= 500 ? 1 : 0);
  m.addMetric(ROUTE_METRICS.latency, MetricUnit.Milliseconds, durationMs);
  m.publishStoredMetrics();
}

/** The request authorizer refused a caller's credentials. */
export function recordAuthenticationRefused(): void {
  metrics().singleMetric().addMetric(AUTHENTICATION_REFUSED_METRIC, MetricUnit.Count, 1);
}

/**
 * A business event, emitted at once as its own EMF line with the metric's
 * declared dimensions (plus service and environment), whatever else the
 * function is doing. Names and dimension names are fixed in `BUSINESS_METRICS`;
 * dimension values must come from closed sets (a paymethod type, a document
 * type, an AU code), never from ids.
 *
 * ```ts
 * recordBusinessMetric('PaymethodsCreated', 1, { paymethod_type: 'card' });
 * recordBusinessMetric('AccountUpdaterRowsApplied', rows.length, { au_code: 'exp' });
 * ```
 */
export function recordBusinessMetric<Name extends BusinessMetricName>(
  name: Name,
  value: number,
  dimensions: BusinessMetricDimensions<Name>,
): void {
  const declared: readonly string[] = BUSINESS_METRICS[name].dimensions;
  const given = Object.entries(dimensions as Record<string, string>);
  const unexpected = given.filter(([key]) => !declared.includes(key)).map(([key]) => key);
  if (unexpected.length) throw new Error(`Business metric ${name} has no dimension ${unexpected.join(', ')}`);
  const single = metrics().singleMetric();
  for (const [key, dimensionValue] of given) single.addDimension(key, dimensionValue);
  single.addMetric(name, MetricUnit[BUSINESS_METRICS[name].unit], value);
}
