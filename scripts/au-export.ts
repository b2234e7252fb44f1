/**
 * npm run --silent au:export -- --month yyyy-mm [--out <dir>] [--stack <name>]
 *
 * Runs the monthly Account Updater export once, with the same code as the
 * scheduled function, and prints {"month", "keys"}. With --out, the files
 * written to the reports bucket are also copied, as stored, under <dir>
 * (`<dir>/au-reports/org_<id>/<yyyy-mm>.csv` and `.xlsx`), and "files" lists them.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { isMonth } from '#shared/domain/account-updater/export.ts';
import { runCli, UsageError } from './cli.ts';
import { applyTarget } from './target.ts';

const USAGE = 'usage: au:export --month yyyy-mm [--out <dir>] [--stack <name>]';

await runCli(async () => {
  let parsed;
  try {
    parsed = parseArgs({ allowPositionals: false, options: { month: { type: 'string' }, out: { type: 'string' }, stack: { type: 'string' } } });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  const { month, out } = parsed.values;
  if (month === undefined || !isMonth(month)) throw new UsageError(`--month must be yyyy-mm (for example 2025-06)\n${USAGE}`);
  if (out === '') throw new UsageError(`--out needs a folder\n${USAGE}`);

  await applyTarget(parsed.values.stack);
  const { exportAccountUpdates } = await import('#shared/domain/account-updater/export.ts');
  const { exportDeps } = await import('#shared/wiring/account-updater-export.ts');
  const result = await exportAccountUpdates(month, exportDeps());
  if (out === undefined) return result;
  // npm runs scripts from the project folder; a relative path means the caller's folder.
  const folder = path.resolve(process.env.INIT_CWD ?? process.cwd(), out);
  const { copyReports } = await import('./report-copies.ts');
  return { ...result, files: await copyReports(result.keys, folder) };
});
