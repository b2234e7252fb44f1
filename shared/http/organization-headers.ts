/**
 * The headers that name the organization a request acts as: ours, and the
 * name Forte clients send, so they work unchanged. Either may be sent, or
 * both with one value (requireOrganizationNamed in shared/domain/credentials.ts).
 */
export const ORGANIZATION_HEADERS = ['X-Service-Auth-Organization-Id', 'X-Forte-Auth-Organization-Id'] as const;

/** Each organization header's value, in ORGANIZATION_HEADERS' order; undefined when absent. `headers` has lower-cased names. */
export function organizationHeaderValues(headers: Readonly<Record<string, string | undefined>>): Array<string | undefined> {
  return ORGANIZATION_HEADERS.map((name) => headers[name.toLowerCase()]);
}
