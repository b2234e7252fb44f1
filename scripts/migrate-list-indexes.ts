/**
 * npm run --silent migrate:list-indexes -- [--stack <name>] [--items-per-second 500] [--segments 4]
 *
 * Moves paymethod items written before the location and organization lists
 * got their own indexes (gsi8, gsi9) to those indexes, and out of gsi1/gsi2.
 * Run once after the deploy that created gsi9 (docs/operations.md,
 * "Upgrading: indexes"); running it again finds nothing to do.
 * Prints {"scanned", "migrated"}.
 */
import { parseArgs } from 'node:util';
import { runCli, UsageError } from './cli.ts';
import { applyTarget } from './target.ts';

const USAGE = 'usage: migrate:list-indexes [--stack <name>] [--items-per-second n (1..900, default 500)] [--segments n (1..16, default 4)]';

await runCli(async () => {
  let parsed;
  try {
    parsed = parseArgs({ allowPositionals: false, options: { stack: { type: 'string' }, 'items-per-second': { type: 'string' }, segments: { type: 'string' } } });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  const itemsPerSecond = Number(parsed.values['items-per-second'] ?? 500);
  const segments = Number(parsed.values.segments ?? 4);
  // Every migrated item deletes its entry under its organization's one gsi2 key: stay below 1,000 writes a second.
  if (!Number.isInteger(itemsPerSecond) || itemsPerSecond < 1 || itemsPerSecond > 900) throw new UsageError(`--items-per-second must be 1 to 900\n${USAGE}`);
  if (!Number.isInteger(segments) || segments < 1 || segments > 16) throw new UsageError(`--segments must be 1 to 16\n${USAGE}`);

  await applyTarget(parsed.values.stack);
  const { dynamo } = await import('#shared/aws/dynamodb.ts');
  const { config } = await import('#shared/runtime/config.ts');
  const { migratePaymethodListKeys } = await import('#shared/store/list-index-migration.ts');
  return migratePaymethodListKeys(dynamo, config.tableName, { segments, itemsPerSecond });
});
