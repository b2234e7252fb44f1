import { GLOBAL_SECONDARY_INDEXES, RETIRED_INDEXES, formatIndexStandIns } from '#shared/store/table.ts';
import type { IndexDefinition, IndexName, RetiredIndexName } from '#shared/store/table.ts';

/**
 * The paymethod table's indexes for one deploy, from two context values an
 * upgrade uses (docs/operations.md, "Upgrading: indexes"). CloudFormation
 * creates or deletes one GSI per stack update and waits until a new one is
 * active, so a stack deployed before an index existed reaches the current
 * set one index a deploy:
 *
 * - `withheldIndexes`: current indexes left out of this deploy;
 * - `retainedIndexes`: retired indexes kept in this deploy.
 *
 * While a successor is withheld and its retired index retained, the
 * functions read the retired one in its place (`standIns`, passed to them as
 * TABLE_INDEX_STAND_INS), so no read ever names an index the table lacks.
 * CloudFormation updates the functions after the table they name, so a deploy
 * that creates a successor switches its reads only once it is active.
 */
export interface TableIndexes {
  readonly indexes: readonly IndexDefinition[];
  /** The value of TABLE_INDEX_STAND_INS; empty unless the stack is being upgraded. */
  readonly standIns: string;
  /** Reads that have no index in this deploy (a successor withheld, its retired index not retained). */
  readonly unserved: readonly IndexName[];
}

/** Each context value is a comma-separated list (`-c withheldIndexes=gsi12,gsi13`), or a list in cdk.json. */
export function tableIndexes(context: { withheld?: unknown; retained?: unknown }): TableIndexes {
  const names = (value: unknown) => (Array.isArray(value) ? value.map(String) : String(value ?? '').split(',')).map((name) => name.trim()).filter(Boolean);
  const currentNames: readonly string[] = GLOBAL_SECONDARY_INDEXES.map((index) => index.indexName);
  const retiredNames: readonly string[] = RETIRED_INDEXES.map((index) => index.indexName);
  const withheld = new Set(names(context.withheld));
  const retained = new Set(names(context.retained));
  // A misspelt name would silently delete or keep the wrong index.
  for (const name of withheld) if (!currentNames.includes(name)) throw new Error(`withheldIndexes: ${name} is not one of the table's indexes (${currentNames.join(', ')})`);
  for (const name of retained) if (!retiredNames.includes(name)) throw new Error(`retainedIndexes: ${name} is not a retired index (${retiredNames.join(', ')})`);

  const standIns: Partial<Record<IndexName, RetiredIndexName>> = {};
  const unserved: IndexName[] = [];
  for (const retired of RETIRED_INDEXES) {
    if (!withheld.has(retired.successor)) continue;
    if (retained.has(retired.indexName)) standIns[retired.successor] = retired.indexName;
    else unserved.push(retired.successor);
  }
  return {
    indexes: [
      ...GLOBAL_SECONDARY_INDEXES.filter((index) => !withheld.has(index.indexName)),
      ...RETIRED_INDEXES.filter((index) => retained.has(index.indexName)).map(({ successor: _successor, ...index }) => index),
    ],
    standIns: formatIndexStandIns(standIns),
    unserved,
  };
}
