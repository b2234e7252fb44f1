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
] as const;

export type IndexName = (typeof GLOBAL_SECONDARY_INDEXES)[number]['indexName'];
