import { AUTHENTICATION_REFUSED_METRIC, AUTHORIZER_UNAUTHORIZED_METRIC, BUSINESS_METRICS, METRICS_NAMESPACE, ROUTE_METRICS, SERVICE_NAME } from './catalog.ts';
import type { BusinessMetricDimensions, BusinessMetricName } from './catalog.ts';

export { BUSINESS_METRICS } from './catalog.ts';
export type { BusinessMetricName } from './catalog.ts';

/**
 * Metrics go to stdout in CloudWatch Embedded Metric Format, which Lambda ships
 * with the logs: no API call, no extra latency. Each call below writes one EMF
 * line, in the shape Powertools Metrics wrote (dimensions `service`,
 * `environment`, then the metric's own), without carrying its library in every
 * bundle. POWERTOOLS_METRICS_DISABLED=true (set by the local runtime) turns them
 * off without changing handler code.
 *
 * The environment is read when a line is written, not at import, so what the
 * local runtime applies before loading a handler is what counts.
 */
type Unit = 'Count' | 'Milliseconds';

function emit(metrics: ReadonlyArray<{ name: string; unit: Unit; value: number }>, dimensions: Readonly<Record<string, string>>): void {
  if (process.env.POWERTOOLS_METRICS_DISABLED === 'true') return;
  const allDimensions = {
    service: process.env.POWERTOOLS_SERVICE_NAME ?? SERVICE_NAME,
    environment: process.env.ENVIRONMENT_NAME ?? 'local',
    ...dimensions,
  };
  const line = {
    _aws: {
      Timestamp: Date.now(),
      CloudWatchMetrics: [
        {
          Namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? METRICS_NAMESPACE,
          Dimensions: [Object.keys(allDimensions)],
          Metrics: metrics.map(({ name, unit }) => ({ Name: name, Unit: unit })),
        },
      ],
    },
    ...allDimensions,
    ...Object.fromEntries(metrics.map(({ name, value }) => [name, value])),
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

export interface RequestOutcome {
  /** The route's handler name: one value per route table entry. */
  route: string;
  statusCode: number;
  durationMs: number;
}

/** Count, 4xx, 5xx and latency of one API request, flushed as one EMF line. */
export function recordRequest({ route, statusCode, durationMs }: RequestOutcome): void {
  emit(
    [
      { name: ROUTE_METRICS.requests, unit: 'Count', value: 1 },
      { name: ROUTE_METRICS.clientErrors, unit: 'Count', value: statusCode >= 400 && statusCode < 500 ? 1 : 0 },
      { name: ROUTE_METRICS.serverErrors, unit: 'Count', value: statusCode >= 500 ? 1 : 0 },
      { name: ROUTE_METRICS.latency, unit: 'Milliseconds', value: durationMs },
    ],
    { route },
  );
}

/** The request authorizer refused a caller's credentials: a 401 (a thrown 'Unauthorized') or a 429. */
export function recordAuthenticationRefused(answer: 'unauthorized' | 'throttled'): void {
  emit(
    [
      { name: AUTHENTICATION_REFUSED_METRIC, unit: 'Count', value: 1 },
      { name: AUTHORIZER_UNAUTHORIZED_METRIC, unit: 'Count', value: answer === 'unauthorized' ? 1 : 0 },
    ],
    {},
  );
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
  const given = dimensions as Record<string, string>;
  const unexpected = Object.keys(given).filter((key) => !declared.includes(key));
  if (unexpected.length) throw new Error(`Business metric ${name} has no dimension ${unexpected.join(', ')}`);
  emit([{ name, unit: BUSINESS_METRICS[name].unit, value }], given);
}
