/**
 * Global setup of the integration project: clears test-output/contract/
 * before the run, and after it prints which documented operations answered
 * with which statuses (and the mismatches, which have already failed their
 * test files), writing the sum to test-output/contract-coverage.json.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { OpenApiContract } from './openapi-contract.ts';

const OUTPUT_DIR = path.resolve(import.meta.dirname, '../../test-output/contract');

export default function setup(): () => void {
  rmSync(OUTPUT_DIR, { recursive: true, force: true });
  mkdirSync(OUTPUT_DIR, { recursive: true });
  return () => {
    const seen = new Map<string, Map<string, number>>();
    const mismatches: string[] = [];
    for (const file of readdirSync(OUTPUT_DIR).filter((name) => name.endsWith('.json'))) {
      const part = JSON.parse(readFileSync(path.join(OUTPUT_DIR, file), 'utf8')) as { seen: Record<string, Record<string, number>>; mismatches: string[] };
      mismatches.push(...part.mismatches);
      for (const [operation, statuses] of Object.entries(part.seen)) {
        const counts = seen.get(operation) ?? new Map<string, number>();
        for (const [status, count] of Object.entries(statuses)) counts.set(status, (counts.get(status) ?? 0) + count);
        seen.set(operation, counts);
      }
    }
    if (seen.size === 0) return;
    const declared = OpenApiContract.fromFile(new URL('../../docs/openapi.json', import.meta.url)).declared();
    const rows = [...declared].map(([operation, statuses]) => {
      const counts = seen.get(operation) ?? new Map<string, number>();
      return { operation, seen: Object.fromEntries([...counts].sort()), declared: statuses, unseen: statuses.filter((status) => !counts.has(status)) };
    });
    const pairs = rows.reduce((sum, row) => sum + Object.keys(row.seen).length, 0);
    const undocumented = [...seen.keys()].filter((operation) => !declared.has(operation));
    const summary = { operations: rows.length, operationsSeen: rows.filter((row) => Object.keys(row.seen).length > 0).length, operationStatusPairsSeen: pairs, answersChecked: [...seen.values()].reduce((sum, counts) => sum + [...counts.values()].reduce((a, b) => a + b, 0), 0), mismatches: mismatches.length, undocumented, rows };
    writeFileSync(path.resolve(OUTPUT_DIR, '..', 'contract-coverage.json'), `${JSON.stringify(summary, null, 2)}\n`);
    console.log(
      `contract: ${summary.answersChecked} answers checked against docs/openapi.json, ${summary.operationsSeen}/${summary.operations} operations and ${pairs} operation x status pairs seen, ${mismatches.length} mismatches (test-output/contract-coverage.json)`,
    );
  };
}
