import { GLOBAL_SECONDARY_INDEXES, RETIRED_INDEXES, formatIndexStandIns } from '#shared/platform/table.ts';
import type { IndexDefinition, IndexName, RetiredIndexName } from '#shared/platform/table.ts';

/**
 * The paymethod table's indexes for one deploy, from three context values an
 * upgrade uses (docs/operations.md, "Upgrading: indexes"). CloudFormation
 * creates or deletes one GSI per stack update, and ends the update once a new
 * index exists, not once DynamoDB has filled it: until then a Query on it is
 * refused ("Cannot read from backfilling global secondary index"). So a
 * stack deployed before an index existed reaches the current set one index a
 * deploy, and reads a new index only in a deploy after the one that made it:
 *
 * - `withheldIndexes`: current indexes left out of this deploy;
 * - `backfillingIndexes`: current indexes in the table that DynamoDB may
 *   still be filling, not to be read yet;
 * - `retainedIndexes`: retired indexes kept in this deploy.
 *
 * While a successor is withheld or backfilling and its retired index
 * retained, the functions read the retired one in its place (`standIns`,
 * passed to them as TABLE_INDEX_STAND_INS), so no read ever names an index
 * the table lacks or cannot serve yet.
 */
export interface TableIndexes {
  readonly indexes: readonly IndexDefinition[];
  /** The value of TABLE_INDEX_STAND_INS; empty unless the stack is being upgraded. */
  readonly standIns: string;
  /** The indexes the functions read in this deploy, stand-ins included. */
  readonly read: readonly string[];
  /** Reads that have no index to serve them in this deploy (withheld or backfilling, with nothing retained in their place). */
  readonly unserved: readonly IndexName[];
}

export interface IndexContext {
  /** Each a comma-separated list (`-c withheldIndexes=gsi12,gsi13`), or a list in cdk.json. */
  readonly withheld?: unknown;
  readonly backfilling?: unknown;
  readonly retained?: unknown;
}

export function tableIndexes(context: IndexContext): TableIndexes {
  const names = (value: unknown) => (Array.isArray(value) ? value.map(String) : String(value ?? '').split(',')).map((name) => name.trim()).filter(Boolean);
  const currentNames: readonly string[] = GLOBAL_SECONDARY_INDEXES.map((index) => index.indexName);
  const retiredNames: readonly string[] = RETIRED_INDEXES.map((index) => index.indexName);
  const withheld = new Set(names(context.withheld));
  const backfilling = new Set(names(context.backfilling));
  const retained = new Set(names(context.retained));
  // A misspelt name would silently delete, keep or read the wrong index.
  for (const name of withheld) if (!currentNames.includes(name)) throw new Error(`withheldIndexes: ${name} is not one of the table's indexes (${currentNames.join(', ')})`);
  for (const name of backfilling) {
    if (!currentNames.includes(name) || withheld.has(name)) throw new Error(`backfillingIndexes: ${name} is not one of the indexes this deploy keeps (${currentNames.filter((current) => !withheld.has(current)).join(', ')})`);
  }
  for (const name of retained) if (!retiredNames.includes(name)) throw new Error(`retainedIndexes: ${name} is not a retired index (${retiredNames.join(', ')})`);

  const standIns: Partial<Record<IndexName, RetiredIndexName>> = {};
  const unserved: IndexName[] = [];
  const read: string[] = [];
  for (const index of GLOBAL_SECONDARY_INDEXES) {
    const readable = !withheld.has(index.indexName) && !backfilling.has(index.indexName);
    const retired = RETIRED_INDEXES.find((candidate) => candidate.successor === index.indexName);
    if (readable) read.push(index.indexName);
    else if (retired && retained.has(retired.indexName)) {
      standIns[retired.successor] = retired.indexName;
      read.push(retired.indexName);
    } else unserved.push(index.indexName);
  }
  return {
    indexes: [
      ...GLOBAL_SECONDARY_INDEXES.filter((index) => !withheld.has(index.indexName)),
      ...RETIRED_INDEXES.filter((index) => retained.has(index.indexName)).map(({ successor: _successor, ...index }) => index),
    ],
    standIns: formatIndexStandIns(standIns),
    read,
    unserved,
  };
}
