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

/**
 * What the Account Updater report indexes hold besides the keys: the token
 * (the page's items are read from the table with one BatchGetItem) and what
 * the report filters on. An applied row still moves its entry (the sort key
 * is the date), but the entry stays under 1 KB: one write unit, not the
 * card's two.
 */
export const AU_REPORT_PROJECTION = ['paymethod_token', 'paymethod_type', 'customer_token', 'customer_id', 'gsi7pk'] as const;

/** The merchant customer id list's: the token and its filters. No Account Updater row writes it. */
export const CUSTOMER_ID_PROJECTION = ['paymethod_token', 'paymethod_type', 'location_id'] as const;

/**
 * The fingerprint list's: the token and its filters. Only a new number (a
 * new fingerprint) moves the entry; other applied rows leave it alone.
 */
export const FINGERPRINT_PROJECTION = ['paymethod_token', 'paymethod_type', 'location_id', 'customer_token', 'customer_id'] as const;

export const GLOBAL_SECONDARY_INDEXES = [
  // Documents (organization), publishable keys (location).
  { indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk', projection: 'ALL' },
  // Documents (organization + type), credentials and publishable keys (organization).
  { indexName: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk', projection: 'ALL' },
  // Documents (organization + resource), paymethods (customer).
  { indexName: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk', projection: 'ALL' },
  // Paymethod lists of a location and of an organization: keys and immutable members only.
  { indexName: 'gsi8', partitionKey: 'gsi8pk', sortKey: 'gsi8sk', projection: PAYMETHOD_LIST_PROJECTION },
  { indexName: 'gsi9', partitionKey: 'gsi9pk', sortKey: 'gsi9sk', projection: PAYMETHOD_LIST_PROJECTION },
  // Over the keys of the ALL indexes they replaced (RETIRED_INDEXES), so DynamoDB fills them from the
  // items as they are: sparse, like those. The Account Updater report (organization, location).
  { indexName: 'gsi10', partitionKey: 'gsi4pk', sortKey: 'gsi4sk', projection: AU_REPORT_PROJECTION },
  { indexName: 'gsi11', partitionKey: 'gsi5pk', sortKey: 'gsi5sk', projection: AU_REPORT_PROJECTION },
  // Paymethods with a merchant customer_id.
  { indexName: 'gsi12', partitionKey: 'gsi6pk', sortKey: 'gsi6sk', projection: CUSTOMER_ID_PROJECTION },
  // Card and echeck paymethods that carry a fingerprint, one partition per organization and fingerprint.
  { indexName: 'gsi13', partitionKey: 'gsi7pk', sortKey: 'gsi7sk', projection: FINGERPRINT_PROJECTION },
] as const satisfies ReadonlyArray<IndexDefinition>;

/**
 * Indexes the table no longer declares, each replaced by its `successor`
 * over the same keys with a narrower projection. A stack deployed before
 * keeps them while it is upgraded (`-c retainedIndexes=`), and reads them in
 * place of successors not built or not filled yet (docs/operations.md,
 * "Upgrading: indexes").
 */
export const RETIRED_INDEXES = [
  { indexName: 'gsi4', partitionKey: 'gsi4pk', sortKey: 'gsi4sk', projection: 'ALL', successor: 'gsi10' },
  { indexName: 'gsi5', partitionKey: 'gsi5pk', sortKey: 'gsi5sk', projection: 'ALL', successor: 'gsi11' },
  { indexName: 'gsi6', partitionKey: 'gsi6pk', sortKey: 'gsi6sk', projection: 'ALL', successor: 'gsi12' },
  { indexName: 'gsi7', partitionKey: 'gsi7pk', sortKey: 'gsi7sk', projection: 'ALL', successor: 'gsi13' },
] as const satisfies ReadonlyArray<IndexDefinition & { successor: IndexName }>;

export interface IndexDefinition {
  readonly indexName: string;
  readonly partitionKey: string;
  readonly sortKey: string;
  readonly projection: IndexProjection;
}

export type IndexName = (typeof GLOBAL_SECONDARY_INDEXES)[number]['indexName'];
export type RetiredIndexName = (typeof RETIRED_INDEXES)[number]['indexName'];

const PROJECTIONS: ReadonlyMap<string, IndexProjection> = new Map([...GLOBAL_SECONDARY_INDEXES, ...RETIRED_INDEXES].map((index) => [index.indexName, index.projection]));

export function indexProjection(indexName: IndexName | RetiredIndexName): IndexProjection {
  return PROJECTIONS.get(indexName)!;
}

/**
 * Which retired index a function reads in place of a successor the table
 * does not have, or DynamoDB is still filling, in the form the stack passes it
 * (`TABLE_INDEX_STAND_INS`, "gsi10=gsi4,gsi13=gsi7"; usually empty).
 */
export type IndexStandIns = Readonly<Partial<Record<IndexName, RetiredIndexName>>>;

export function formatIndexStandIns(standIns: IndexStandIns): string {
  return Object.entries(standIns).map(([successor, retired]) => `${successor}=${retired}`).join(',');
}

/** Only pairs RETIRED_INDEXES names: anything else is a deploy mistake, refused when first read. */
export function parseIndexStandIns(value: string | undefined): IndexStandIns {
  const standIns: Partial<Record<IndexName, RetiredIndexName>> = {};
  for (const pair of (value ?? '').split(',').map((part) => part.trim()).filter(Boolean)) {
    const [successor, retired, ...rest] = pair.split('=').map((part) => part.trim());
    const known = rest.length === 0 ? RETIRED_INDEXES.find((index) => index.indexName === retired && index.successor === successor) : undefined;
    if (!known) throw new Error(`TABLE_INDEX_STAND_INS: ${pair} does not name a retired index and its successor`);
    standIns[known.successor] = known.indexName;
  }
  return standIns;
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

/**
 * The webhook deliveries table: what delivery keeps while it works (lanes,
 * settled messages, the attempts log, endpoint slots, parked messages;
 * shared/store/webhooks.ts `webhookKeys`), apart from the paymethod table for the same reason as the
 * history: a delivery writes several times, and on the paymethod table each
 * write would be a change record the event publisher reads and throws away,
 * behind the real changes it is there to publish. No index and no stream, so a
 * write costs DynamoDB the item alone. The endpoints themselves are records
 * and stay on the paymethod table. Items expire with TTL (TTL_ATTRIBUTE).
 */
export const WEBHOOK_TABLE_KEY = TABLE_KEY;
