/**
 * npm run --silent au:apply -- <file.csv> [--org org_<id>] [--stack <name>]
 *
 * Applies an Account Updater file to the running local service's store (or a
 * deployed stack's) with the same state machine definition and handlers as
 * the inbox, and prints {"applied", "skipped", "errors", "error_count",
 * "notes"}, plus "errors_file" (the whole list, next to the file) when the
 * summary lists only the first 1,000 errors. A run that failed as a whole
 * (more batches failed than the map tolerates, or the file could not be read)
 * still prints its summary, which then has "failure", and exits 3.
 */
import { access } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { isOrganizationId } from '#shared/domain/ids.ts';
import { InvalidRequest } from '#shared/domain/errors.ts';
import { codeOfKind } from '#shared/platform/response-codes.ts';
import { runCli, UsageError } from './cli.ts';
import { applyTarget } from './target.ts';

const USAGE = 'usage: au:apply <file.csv> [--org org_<id>] [--stack <name>]';
const FUNCTIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'functions');
/** The run failed part-way: the summary (stdout) says what was applied. Distinct from a failure before any summary (1) and a usage error (2). */
const RUN_FAILED = 3;

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
  process.env.LOG_LEVEL ??= 'WARN';
  // Imported after the target is applied: these modules build their AWS clients from it.
  const { applyLocalFile } = await import('../local/au-engine.ts');
  const { config } = await import('#shared/runtime/config.ts');
  const { summary, errorsFile } = await applyLocalFile(filePath, organizationId ? { organizationId } : {}, { bucket: config.reportsBucket, functionsDir: FUNCTIONS_DIR, concurrency: Number(process.env.AU_WORKERS ?? 4), ...(process.env.AU_DEBUG ? { log: (line: Record<string, unknown>) => process.stderr.write(`${JSON.stringify(line)}\n`) } : {}) });
  if (typeof summary.error === 'string') throw new InvalidRequest([{ field: 'file', message: String(summary.message) }], codeOfKind(summary.error, 'invalid'));
  const { errors_key: _key, ...printed } = summary;
  if (summary.failure !== undefined) process.exitCode = RUN_FAILED;
  return { ...printed, ...(errorsFile ? { errors_file: errorsFile } : {}) };
});
