/**
 * The single table's physical shape, shared by the CDK stack and the local
 * runtime so both create the same keys and indexes. Attribute names are
 * generic; what they hold per entity is written down in docs/data-model.md.
 */
export const TABLE_KEY = { partitionKey: 'pk', sortKey: 'sk' } as const;
export const TTL_ATTRIBUTE = 'expires_at';

/**
 * What the paymethod list indexes (location, organization) hold besides the
 * keys: only attributes that never change after a paymethod is created, none
 * that the Account Updater writes. An applied row then writes no entry of
 * these indexes at all, so one organization's run never meets their
 * one-key-per-organization (or per-location) partitions; a list page is the
 * index Query followed by one BatchGetItem of the page's items
 * (docs/data-model.md, "Paymethod lists"). `paymethod_type` is the filter
 * these lists evaluate on the index.
 */
export const PAYMETHOD_LIST_PROJECTION = ['paymethod_token', 'paymethod_type'] as const;

/** `ALL`, or the non-key attributes an index carries (INCLUDE). */
export type IndexProjection = 'ALL' | readonly string[];

export const GLOBAL_SECONDARY_INDEXES = [
  // Documents (organization), publishable keys (location).
  { indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk', projection: 'ALL' },
  // Documents (organization + type), credentials and publishable keys (organization).
  { indexName: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk', projection: 'ALL' },
  // Documents (organization + resource), paymethods (customer).
  { indexName: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk', projection: 'ALL' },
  // Sparse: only items that carry the attributes are indexed (cards touched by
  // the Account Updater, paymethods with a merchant customer_id).
  { indexName: 'gsi4', partitionKey: 'gsi4pk', sortKey: 'gsi4sk', projection: 'ALL' },
  { indexName: 'gsi5', partitionKey: 'gsi5pk', sortKey: 'gsi5sk', projection: 'ALL' },
  { indexName: 'gsi6', partitionKey: 'gsi6pk', sortKey: 'gsi6sk', projection: 'ALL' },
  // Sparse: card and echeck paymethods that carry a fingerprint, one partition per organization and fingerprint.
  { indexName: 'gsi7', partitionKey: 'gsi7pk', sortKey: 'gsi7sk', projection: 'ALL' },
  // Paymethod lists of a location and of an organization: keys and immutable members only.
  { indexName: 'gsi8', partitionKey: 'gsi8pk', sortKey: 'gsi8sk', projection: PAYMETHOD_LIST_PROJECTION },
  { indexName: 'gsi9', partitionKey: 'gsi9pk', sortKey: 'gsi9sk', projection: PAYMETHOD_LIST_PROJECTION },
] as const satisfies ReadonlyArray<{ indexName: string; partitionKey: string; sortKey: string; projection: IndexProjection }>;

export type IndexName = (typeof GLOBAL_SECONDARY_INDEXES)[number]['indexName'];

export function indexProjection(indexName: IndexName): IndexProjection {
  return GLOBAL_SECONDARY_INDEXES.find((index) => index.indexName === indexName)!.projection;
}

/** The table's stream carries both images of every write: domain events are derived from them (docs/events.md). */
export const TABLE_STREAM_VIEW = 'NEW_AND_OLD_IMAGES';

/**
 * The Account Updater's history table: the applied rows and month markers the
 * monthly export reads (keys.ts `auHistory`, `auMonth`), apart from the
 * paymethod table because they are a log, not records: no index and no
 * stream. A 1,000,000-row run writes a million of them; on the paymethod
 * table each would also be a change record the event publisher reads and
 * throws away, competing with the real changes of the same run. Items expire
 * with TTL (TTL_ATTRIBUTE) like the rest.
 */
export const AU_HISTORY_TABLE_KEY = TABLE_KEY;
