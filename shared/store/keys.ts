import type { IndexName } from './table.ts';

/** Every key the service writes is built here, so the layout can be read in one place. */
export const keys = {
  organization: (organizationId: string) => ({ pk: `ORG#${organizationId}`, sk: 'ORG' }),
  credential: (accessId: string) => ({ pk: `CRED#${accessId}`, sk: 'CRED' }),
  /** The organization is part of the key: another organization's id cannot even address the item. */
  document: (organizationId: string, documentId: string) => ({ pk: `DOC#${organizationId}#${documentId}`, sk: 'DOC' }),
  /**
   * A document's list entries, written only once its file is available (the
   * indexes are sparse: pending, rejected and deleting documents are not in
   * them). One partition per organization, and one per organization and type
   * or resource, each sorted by the instant the upload completed, so the date
   * filters are key conditions and newest-first is a reverse Query.
   */
  documentIndexes: (organizationId: string, type: string, resource: string, receivedAt: string, documentId: string) => {
    const sortKey = documentListSortKey(receivedAt, documentId);
    return {
      gsi1pk: documentListPartition(organizationId, {}).partitionKey,
      gsi1sk: sortKey,
      gsi2pk: documentListPartition(organizationId, { type }).partitionKey,
      gsi2sk: sortKey,
      gsi3pk: documentListPartition(organizationId, { resource }).partitionKey,
      gsi3sk: sortKey,
    };
  },
} as const;

export const DOCUMENT_INDEX_ATTRIBUTES = ['gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk', 'gsi3pk', 'gsi3sk'] as const;

/** Which index and partition serve a document list: by type (gsi2), by resource (gsi3), or all (gsi1). */
export function documentListPartition(
  organizationId: string,
  by: { type?: string; resource?: string },
): { indexName: IndexName; partitionKey: string; sortKeyAttribute: string; partitionKeyAttribute: string } {
  if (by.type !== undefined) {
    return { indexName: 'gsi2', partitionKeyAttribute: 'gsi2pk', sortKeyAttribute: 'gsi2sk', partitionKey: `DOC#ORG#${organizationId}#TYPE#${by.type}` };
  }
  if (by.resource !== undefined) {
    return { indexName: 'gsi3', partitionKeyAttribute: 'gsi3pk', sortKeyAttribute: 'gsi3sk', partitionKey: `DOC#ORG#${organizationId}#RESOURCE#${by.resource}` };
  }
  return { indexName: 'gsi1', partitionKeyAttribute: 'gsi1pk', sortKeyAttribute: 'gsi1sk', partitionKey: `DOC#ORG#${organizationId}` };
}

/** `DOC#<ISO 8601 instant with milliseconds>#<document id>`: sorts by time, unique per document. */
export function documentListSortKey(receivedAt: string, documentId: string): string {
  return `DOC#${receivedAt}#${documentId}`;
}

/**
 * Bounds for a time range on the list sort key. A bound is `yyyy-mm-ddThh:mm:ss`
 * (UTC, whole seconds): it prefixes every instant within that second, so the
 * upper bound appends `~`, which sorts after `.`, `Z` and `#`.
 */
export function documentListSortKeyBounds(range: { from?: string; to?: string }): { from?: string; to?: string } {
  return {
    ...(range.from !== undefined ? { from: `DOC#${range.from}` } : {}),
    ...(range.to !== undefined ? { to: `DOC#${range.to}~` } : {}),
  };
}

/** Key attributes never leave a repository. */
export const KEY_ATTRIBUTES = ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk', 'gsi3pk', 'gsi3sk', 'expires_at'] as const;

export function withoutKeys<T extends Record<string, unknown>>(item: T): Omit<T, (typeof KEY_ATTRIBUTES)[number]> {
  const copy: Record<string, unknown> = { ...item };
  for (const name of KEY_ATTRIBUTES) delete copy[name];
  return copy as Omit<T, (typeof KEY_ATTRIBUTES)[number]>;
}
