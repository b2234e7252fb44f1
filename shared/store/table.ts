/**
 * The single table's physical shape, shared by the CDK stack and the local
 * runtime so both create the same keys and indexes. Attribute names are
 * generic; what they hold per entity is written down in docs/data-model.md.
 */
export const TABLE_KEY = { partitionKey: 'pk', sortKey: 'sk' } as const;
export const TTL_ATTRIBUTE = 'expires_at';
export const GLOBAL_SECONDARY_INDEXES = [
  { indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  { indexName: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  { indexName: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk' },
  // Sparse: only items that carry the attributes are indexed (cards touched by
  // the Account Updater, paymethods with a merchant customer_id).
  { indexName: 'gsi4', partitionKey: 'gsi4pk', sortKey: 'gsi4sk' },
  { indexName: 'gsi5', partitionKey: 'gsi5pk', sortKey: 'gsi5sk' },
  { indexName: 'gsi6', partitionKey: 'gsi6pk', sortKey: 'gsi6sk' },
  // Sparse: card and echeck paymethods that carry a fingerprint, one partition per organization and fingerprint.
  { indexName: 'gsi7', partitionKey: 'gsi7pk', sortKey: 'gsi7sk' },
] as const;

export type IndexName = (typeof GLOBAL_SECONDARY_INDEXES)[number]['indexName'];
/** The table's stream carries both images of every write: domain events are derived from them (docs/events.md). */
export const TABLE_STREAM_VIEW = 'NEW_AND_OLD_IMAGES';
