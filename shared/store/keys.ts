import { createHash } from 'node:crypto';
import { ITEM_PARTITION_PREFIXES } from '../platform/item-kinds.ts';
import { GLOBAL_SECONDARY_INDEXES, TTL_ATTRIBUTE } from '../platform/table.ts';
import type { IndexName } from '../platform/table.ts';

/** The only items list functions may write (their IAM grant is conditioned on this key prefix). */
export const PAGE_BOUNDARY_KEY_PREFIX = ITEM_PARTITION_PREFIXES.pageBoundary;

/**
 * Every key the service writes is built here, so the layout can be read in
 * one place (docs/data-model.md explains each pattern).
 */
export const keys = {
  organization: (organizationId: string) => ({ pk: `ORG#${organizationId}`, sk: 'ORG' }),
  credential: (accessId: string) => ({ pk: `CRED#${accessId}`, sk: 'CRED' }),
  /** An organization's active credentials, newest first (gsi2); revoking removes the entry. */
  credentialByOrganization: (organizationId: string, createdAt: string, accessId: string) => ({
    gsi2pk: `ORG#${organizationId}#CRED`,
    gsi2sk: `${createdAt}#${accessId}`,
  }),
  /**
   * Failed authentications in one clock minute from one source address
   * (`IP#`), or naming one access id (`ID#`, by its SHA-256: an id is any
   * printable ASCII the caller chose, the hash a fixed 43 characters); TTL
   * removes it.
   */
  authFailures: (subject: { kind: 'address' | 'access-id'; id: string }, minute: number) => ({
    pk: subject.kind === 'address' ? `AUTHFAIL#IP#${subject.id}#${minute}` : `AUTHFAIL#ID#${createHash('sha256').update(subject.id, 'utf8').digest('base64url')}#${minute}`,
    sk: 'AUTHFAIL',
  }),

  paymethod: (paymethodToken: string) => ({ pk: `MTH#${paymethodToken}`, sk: 'MTH' }),
  /**
   * Newest-first orderings: ISO timestamps sort as text; the token breaks ties.
   * The organization and location lists live in their own indexes (gsi9,
   * gsi8) that hold only keys and immutable members (shared/platform/table.ts), because their
   * partitions take one organization's whole card base.
   */
  paymethodByOrganization: (organizationId: string, createdAt: string, token: string) => ({ gsi9pk: `ORG#${organizationId}#MTH`, gsi9sk: `${createdAt}#${token}` }),
  paymethodByLocation: (organizationId: string, locationId: string, createdAt: string, token: string) => ({
    gsi8pk: `LOC#${organizationId}#${locationId}#MTH`,
    gsi8sk: `${createdAt}#${token}`,
  }),
  paymethodByCustomer: (organizationId: string, customerToken: string, createdAt: string, token: string) => ({
    gsi3pk: `CST#${organizationId}#${customerToken}#MTH`,
    gsi3sk: `${createdAt}#${token}`,
  }),
  paymethodByCustomerId: (organizationId: string, customerId: string, createdAt: string, token: string) => ({
    gsi6pk: `CID#${organizationId}#${customerId}#MTH`,
    gsi6sk: `${createdAt}#${token}`,
  }),
  /**
   * Sparse Account Updater indexes: only cards with an au_updated_date are in
   * them. Write-sharded by token (auShardOf): one organization's run updates
   * thousands of cards a second, more than one partition key takes.
   */
  paymethodAuByOrganization: (organizationId: string, auUpdatedDate: string, token: string) => ({
    gsi4pk: auReportPartition(organizationId, undefined, auShardOf(token)),
    gsi4sk: `${auUpdatedDate}#${token}`,
  }),
  paymethodAuByLocation: (organizationId: string, locationId: string, auUpdatedDate: string, token: string) => ({
    gsi5pk: auReportPartition(organizationId, locationId, auShardOf(token)),
    gsi5sk: `${auUpdatedDate}#${token}`,
  }),
  /** Sparse fingerprint index: the organization is in the key, so another organization's fingerprint finds nothing. */
  paymethodByFingerprint: (organizationId: string, fingerprint: string, createdAt: string, token: string) => ({
    gsi7pk: `FP#${organizationId}#${fingerprint}`,
    gsi7sk: `${createdAt}#${token}`,
  }),
  /**
   * The paymethods holding one fingerprint within one duplicate scope (a customer, or a
   * location's or the organization's paymethods without a customer), as a string set
   * `tokens`: joined in the same transaction as every create, move and number change, and
   * left in the same transaction as every delete and move, so a create with
   * fail_on_duplicate can refuse atomically. An Account Updater number change only joins,
   * so the set may also name former holders, which that create checks and takes out.
   */
  duplicateScope: (organizationId: string, scope: string, fingerprint: string) => ({ pk: `DUP#${organizationId}#${scope}#${fingerprint}`, sk: 'DUP' }),
  /** One item per customer naming its default paymethod; its existence is the "has a default" lock. */
  customerDefault: (organizationId: string, customerToken: string) => ({ pk: `CST#${organizationId}#${customerToken}`, sk: 'DEFAULT' }),

  oneTimeToken: (token: string) => ({ pk: `OTT#${token}`, sk: 'OTT' }),
  publishableKey: (publishableKey: string) => ({ pk: `PUBKEY#${publishableKey}`, sk: 'PUBKEY' }),
  /** A location's publishable keys, for CORS preflights (gsi1, beside the location's paymethods). */
  publishableKeyByLocation: (organizationId: string, locationId: string, createdAt: string, publishableKey: string) => ({
    gsi1pk: `LOC#${organizationId}#${locationId}#PUBKEY`,
    gsi1sk: `${createdAt}#${publishableKey}`,
  }),
  /** An organization's active publishable keys, newest first (gsi2); revoking removes the entry. */
  publishableKeyByOrganization: (organizationId: string, createdAt: string, publishableKey: string) => ({
    gsi2pk: `ORG#${organizationId}#PUBKEY`,
    gsi2sk: `${createdAt}#${publishableKey}`,
  }),
  /** One counter per publishable key per clock minute; TTL removes it. */
  mintCounter: (publishableKey: string, minute: number) => ({ pk: `RATE#${publishableKey}#${minute}`, sk: 'RATE' }),
  /**
   * Account Updater history: one item per applied row, read back in order by
   * the monthly export. Write-sharded by token like the report indexes; the
   * source line in the sort key makes a retried batch rewrite the same item.
   */
  auHistory: (organizationId: string, month: string, auUpdatedDate: string, token: string, line: number) => ({
    pk: auHistoryPartition(organizationId, month, auShardOf(token)),
    sk: `${auUpdatedDate}#${token}#L${String(line).padStart(9, '0')}`,
  }),
  /** Which organizations have updates in a month: the export's starting point, instead of a Scan. */
  auMonth: (month: string, organizationId: string) => ({ pk: `AUMONTH#${month}`, sk: `ORG#${organizationId}` }),
  /** When an update file (by the SHA-256 of its bytes) was first applied. */
  auFile: (fileId: string) => ({ pk: `AUFILE#${fileId}`, sk: 'FILE' }),
  /** The run that took one upload (the object's key and S3's sequencer for that write) into the inbox. */
  auDelivery: (objectKey: string, sequencer: string) => ({ pk: `AUDELIVERY#${objectKey}`, sk: `SEQ#${sequencer}` }),
  idempotency: (organizationId: string, key: string) => ({ pk: `IDEM#${organizationId}#${key}`, sk: 'IDEM' }),
  /**
   * Where page `pageIndex` of one list query starts (see page-boundaries.ts): one partition per query
   * fingerprint and page size, so a partition only takes the writes of paging that one query.
   */
  pageBoundary: (fingerprint: string, pageSize: number, pageIndex: number) => ({ pk: `${PAGE_BOUNDARY_KEY_PREFIX}${fingerprint}#${pageSize}`, sk: `P#${String(pageIndex).padStart(9, '0')}` }),

  /** The organization is part of the key: another organization's id cannot even address the item. */
  document: (organizationId: string, documentId: string) => ({ pk: `DOC#${organizationId}#${documentId}`, sk: 'DOC' }),
  /**
   * A document's list entries, written only once its file is available (the
   * indexes are sparse: pending, rejected and deleting documents are not in
   * them). One partition per organization, and one per organization and type
   * or resource, each sorted by the instant the upload completed, so the date
   * filters are key conditions and newest-first is a reverse Query.
   */
  /**
   * One document's claim on its bytes within an organization's resource_id:
   * written in the transaction that makes the document available, only if
   * absent, so the same bytes cannot become two documents; removed with it.
   */
  documentHash: (organizationId: string, resourceId: string, sha256: string) => ({ pk: `DOCSHA#${organizationId}#${resourceId}#${sha256}`, sk: 'DOCSHA' }),
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

/**
 * Write shards of every key one organization's Account Updater run writes in
 * order. 5,000 rows/s over 8 shards is 625 writes/s per key, under
 * DynamoDB's 1,000 per partition with room for the hash's unevenness
 * (docs/account-updater.md has the arithmetic).
 */
export const AU_SHARDS = 8;

/** FNV-1a of the token, so a card always lands in the same shard. */
export function auShardOf(token: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < token.length; index += 1) {
    hash ^= token.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % AU_SHARDS;
}

/**
 * The report index partition of one shard. `shard` undefined is the
 * unsharded partition cards updated before sharding still sit in; readers
 * merge it with the shards.
 */
export function auReportPartition(organizationId: string, locationId: string | undefined, shard: number | undefined): string {
  const base = locationId === undefined ? `AU#${organizationId}` : `AU#${organizationId}#${locationId}`;
  return shard === undefined ? base : `${base}#S${shard}`;
}

/** The history partition of one shard (undefined: the unsharded partition of earlier months). */
export function auHistoryPartition(organizationId: string, month: string, shard: number | undefined): string {
  return `AUHIST#${organizationId}#${month}${shard === undefined ? '' : `#S${shard}`}`;
}

/** Every partition a reader of one organization's AU keys merges: the shards, then the unsharded one. */
export function auShards(): Array<number | undefined> {
  return [...Array.from({ length: AU_SHARDS }, (_unused, shard) => shard), undefined];
}

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

/**
 * Where paymethod items kept their location and organization list keys
 * before those lists moved to gsi8/gsi9. gsi1 and gsi2 still serve other
 * entities; a paymethod item written before the move loses these on its
 * next update or Account Updater write, or by `npm run migrate:list-indexes`.
 */
export const LEGACY_PAYMETHOD_LIST_KEY_ATTRIBUTES = ['gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk'] as const;

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

/**
 * Table key prefixes of the items whose changes are published as domain
 * events (docs/events.md): the stream trigger filters on them, in AWS and
 * locally, and the change decoder classifies by them.
 */
export const EVENT_ITEM_KEYS = {
  paymethod: { pkPrefix: keys.paymethod('').pk, sk: keys.paymethod('').sk },
  document: { pkPrefix: 'DOC#', sk: keys.document('', '').sk },
} as const;
