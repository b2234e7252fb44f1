import { REPORT_OBJECT_PREFIXES } from '#shared/platform/names.ts';
import { isOrganizationId } from '../ids.ts';

export const INBOX_PREFIX = REPORT_OBJECT_PREFIXES.inbox;
export const RESULTS_PREFIX = REPORT_OBJECT_PREFIXES.results;

/**
 * What a key in the reports bucket's inbox means: `au-inbox/org_<id>/...csv`
 * is scoped to that organization, any other `au-inbox/...csv` is not. The
 * summary goes to the same path under `au-results/` with `.json` appended.
 */
export function inboxFile(key: string): { organizationId?: string; resultKey: string } | undefined {
  if (!key.startsWith(INBOX_PREFIX) || !key.toLowerCase().endsWith('.csv')) return undefined;
  const rest = key.slice(INBOX_PREFIX.length);
  const first = rest.split('/')[0] ?? '';
  const scoped = rest.includes('/') && isOrganizationId(first);
  return { ...(scoped ? { organizationId: first } : {}), resultKey: `${RESULTS_PREFIX}${rest}.json` };
}

/** S3 event keys are URL-encoded, with `+` for spaces. */
export function decodeS3Key(key: string): string {
  return decodeURIComponent(key.replace(/\+/g, ' '));
}

/** The whole error list of a run, beside its summary: `au-results/<path>.csv.errors.csv`. */
export function errorsKeyOf(resultKey: string): string {
  return `${resultKey.replace(/\.json$/, '')}.errors.csv`;
}
