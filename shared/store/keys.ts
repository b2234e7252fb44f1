import { GLOBAL_SECONDARY_INDEXES, TTL_ATTRIBUTE } from './table.ts';

/**
 * Every key the service writes is built here, so the layout can be read in
 * one place (docs/data-model.md explains each pattern).
 */
export const keys = {
  organization: (organizationId: string) => ({ pk: `ORG#${organizationId}`, sk: 'ORG' }),
  credential: (accessId: string) => ({ pk: `CRED#${accessId}`, sk: 'CRED' }),

  paymethod: (paymethodToken: string) => ({ pk: `MTH#${paymethodToken}`, sk: 'MTH' }),
  /** Newest-first orderings: ISO timestamps sort as text; the token breaks ties. */
  paymethodByOrganization: (organizationId: string, createdAt: string, token: string) => ({ gsi2pk: `ORG#${organizationId}#MTH`, gsi2sk: `${createdAt}#${token}` }),
  paymethodByLocation: (organizationId: string, locationId: string, createdAt: string, token: string) => ({
    gsi1pk: `LOC#${organizationId}#${locationId}#MTH`,
    gsi1sk: `${createdAt}#${token}`,
  }),
  paymethodByCustomer: (organizationId: string, customerToken: string, createdAt: string, token: string) => ({
    gsi3pk: `CST#${organizationId}#${customerToken}#MTH`,
    gsi3sk: `${createdAt}#${token}`,
  }),
  paymethodByCustomerId: (organizationId: string, customerId: string, createdAt: string, token: string) => ({
    gsi6pk: `CID#${organizationId}#${customerId}#MTH`,
    gsi6sk: `${createdAt}#${token}`,
  }),
  /** Sparse Account Updater indexes: only cards with an au_updated_date are in them. */
  paymethodAuByOrganization: (organizationId: string, auUpdatedDate: string, token: string) => ({ gsi4pk: `AU#${organizationId}`, gsi4sk: `${auUpdatedDate}#${token}` }),
  paymethodAuByLocation: (organizationId: string, locationId: string, auUpdatedDate: string, token: string) => ({
    gsi5pk: `AU#${organizationId}#${locationId}`,
    gsi5sk: `${auUpdatedDate}#${token}`,
  }),
  /** One item per customer naming its default paymethod; its existence is the "has a default" lock. */
  customerDefault: (organizationId: string, customerToken: string) => ({ pk: `CST#${organizationId}#${customerToken}`, sk: 'DEFAULT' }),

  oneTimeToken: (token: string) => ({ pk: `OTT#${token}`, sk: 'OTT' }),
  /** Account Updater history: one item per applied update, read back in order by the monthly export. */
  auHistory: (organizationId: string, month: string, auUpdatedDate: string, token: string, version: number) => ({
    pk: `AUHIST#${organizationId}#${month}`,
    sk: `${auUpdatedDate}#${token}#v${String(version).padStart(6, '0')}`,
  }),
  /** Which organizations have updates in a month: the export's starting point, instead of a Scan. */
  auMonth: (month: string, organizationId: string) => ({ pk: `AUMONTH#${month}`, sk: `ORG#${organizationId}` }),
  idempotency: (organizationId: string, key: string) => ({ pk: `IDEM#${organizationId}#${key}`, sk: 'IDEM' }),
} as const;

/** Key attributes never leave a repository. */
export const KEY_ATTRIBUTES: readonly string[] = [
  'pk',
  'sk',
  ...GLOBAL_SECONDARY_INDEXES.flatMap((index) => [index.partitionKey, index.sortKey]),
  TTL_ATTRIBUTE,
];

export function withoutKeys<T extends Record<string, unknown>>(item: T): Omit<T, 'pk' | 'sk' | 'expires_at'> {
  const copy: Record<string, unknown> = { ...item };
  for (const name of KEY_ATTRIBUTES) delete copy[name];
  return copy as Omit<T, 'pk' | 'sk' | 'expires_at'>;
}
