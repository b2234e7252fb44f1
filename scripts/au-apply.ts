/**
 * npm run --silent au:apply -- <file.csv> [--org org_<id>] [--stack <name>]
 *
 * Applies an Account Updater file to the running local service's store (or a
 * deployed stack's) with the same use case as the ingest function, and prints
 * {"applied", "skipped", "errors", "notes"}.
 */
import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { isOrganizationId } from '#shared/domain/ids.ts';
import { runCli, UsageError } from './cli.ts';
import { applyTarget } from './target.ts';

const USAGE = 'usage: au:apply <file.csv> [--org org_<id>] [--stack <name>]';

await runCli(async () => {
  let parsed;
  try {
    parsed = parseArgs({ allowPositionals: true, options: { org: { type: 'string' }, stack: { type: 'string' } } });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  const [file, ...extra] = parsed.positionals;
  if (!file || extra.length > 0) throw new UsageError(USAGE);
  const organizationId = parsed.values.org;
  if (organizationId !== undefined && !isOrganizationId(organizationId)) throw new UsageError(`--org must be org_<id>\n${USAGE}`);
  // npm runs scripts from the project folder; a relative path means the caller's folder.
  const filePath = path.resolve(process.env.INIT_CWD ?? process.cwd(), file);
  try {
    await access(filePath);
  } catch {
    throw new UsageError(`cannot read ${file}\n${USAGE}`);
  }

  await applyTarget(parsed.values.stack);
  // Imported after the target is applied: these modules build their AWS clients from it.
  const { applyAccountUpdates } = await import('#shared/domain/account-updater/apply.ts');
  const { applyDeps } = await import('#shared/wiring/account-updater.ts');
  return applyAccountUpdates(() => createReadStream(filePath, { highWaterMark: 64 * 1024 }), organizationId ? { organizationId } : {}, applyDeps());
});
