/**
 * npm run --silent au:export -- --month yyyy-mm [--stack <name>]
 *
 * Runs the monthly Account Updater export once, with the same code as the
 * scheduled function, and prints {"month", "keys"}.
 */
import { parseArgs } from 'node:util';
import { isMonth } from '#shared/domain/account-updater/export.ts';
import { runCli, UsageError } from './cli.ts';
import { applyTarget } from './target.ts';

const USAGE = 'usage: au:export --month yyyy-mm [--stack <name>]';

await runCli(async () => {
  let parsed;
  try {
    parsed = parseArgs({ allowPositionals: false, options: { month: { type: 'string' }, stack: { type: 'string' } } });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  const { month } = parsed.values;
  if (month === undefined || !isMonth(month)) throw new UsageError(`--month must be yyyy-mm (for example 2025-06)\n${USAGE}`);

  await applyTarget(parsed.values.stack);
  const { exportAccountUpdates } = await import('#shared/domain/account-updater/export.ts');
  const { exportDeps } = await import('#shared/wiring/account-updater.ts');
  return exportAccountUpdates(month, exportDeps());
});
