/** Every key the service writes is built here, so the layout can be read in one place. */
export const keys = {
  organization: (organizationId: string) => ({ pk: `ORG#${organizationId}`, sk: 'ORG' }),
  credential: (accessId: string) => ({ pk: `CRED#${accessId}`, sk: 'CRED' }),
} as const;

/** Key attributes never leave a repository. */
export const KEY_ATTRIBUTES = ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk', 'gsi3pk', 'gsi3sk', 'expires_at'] as const;

export function withoutKeys<T extends Record<string, unknown>>(item: T): Omit<T, (typeof KEY_ATTRIBUTES)[number]> {
  const copy: Record<string, unknown> = { ...item };
  for (const name of KEY_ATTRIBUTES) delete copy[name];
  return copy as Omit<T, (typeof KEY_ATTRIBUTES)[number]>;
}
