import type { SourceRow } from '#shared/domain/account-updater/rows.ts';
import { AU_HEADER } from '#shared/domain/account-updater/rows.ts';
import type { BatchItem } from './state-machine.ts';

/**
 * Map items to rows and back. In AWS the Step Functions CSV reader turns
 * each record into an object keyed by the given header names (item index 0
 * is the header row itself); the local reader builds the same objects from
 * csv-parse's records, naming cells past the fifth `column_6`, `column_7`...
 * so a row's column count survives the trip either way.
 */
export function batchItem(row: SourceRow): BatchItem {
  const cells: Record<string, string> = {};
  row.fields.forEach((value, index) => {
    cells[AU_HEADER[index] ?? `column_${index + 1}`] = value;
  });
  return { index: row.line - 1, row: cells };
}

export function sourceRows(items: readonly BatchItem[]): SourceRow[] {
  return items.map((item) => {
    const named = AU_HEADER.filter((name) => Object.hasOwn(item.row, name)).map((name) => item.row[name] ?? '');
    const extra = Object.keys(item.row).filter((name) => !(AU_HEADER as readonly string[]).includes(name)).map((name) => item.row[name] ?? '');
    return { line: item.index + 1, fields: [...named, ...extra] };
  });
}
