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
 *
 * While it runs, standard error shows rows done, the rate, errors so far and
 * the time left (a bar on a terminal, a line every 5 seconds otherwise), and
 * at the end one line a person reads; standard output holds only the JSON.
 */
import { access } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { isOrganizationId } from '#shared/domain/ids.ts';
import { InvalidRequest } from '#shared/domain/errors.ts';
import { codeOfKind } from '#shared/platform/response-codes.ts';
import { runCli, UsageError } from './cli.ts';
import { duration, progressReporter } from './progress.ts';
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
  const progress = progressReporter(process.stderr);
  const startedAt = Date.now();
  const { summary, errorsFile } = await applyLocalFile(filePath, organizationId ? { organizationId } : {}, {
    bucket: config.reportsBucket,
    functionsDir: FUNCTIONS_DIR,
    concurrency: Number(process.env.AU_WORKERS ?? 4),
    progress: (event) => (event.type === 'started' ? progress.start(event.rows) : progress.add(event.rows, event.errors)),
    ...(process.env.AU_DEBUG ? { log: (line: Record<string, unknown>) => process.stderr.write(`${JSON.stringify(line)}\n`) } : {}),
  }).finally(() => progress.finish());
  if (typeof summary.error === 'string') throw new InvalidRequest([{ field: 'file', message: String(summary.message) }], codeOfKind(summary.error, 'invalid'));
  const { errors_key: _key, ...printed } = summary;
  if (summary.failure !== undefined) process.exitCode = RUN_FAILED;
  process.stderr.write(`${closingLine(summary, Date.now() - startedAt, errorsFile)}\n`);
  return { ...printed, ...(errorsFile ? { errors_file: errorsFile } : {}) };
});

/** `applied 98,000, skipped 1,000, 1,000 errors in 100,000 rows, 2m 13s (752 rows/s)`, and where the whole error list is. */
function closingLine(summary: Record<string, unknown>, elapsedMs: number, errorsFile: string | undefined): string {
  const number = (value: unknown) => (typeof value === 'number' ? value : 0);
  const [applied, skipped] = [number(summary.applied), number(summary.skipped)];
  const errors = typeof summary.error_count === 'number' ? summary.error_count : Array.isArray(summary.errors) ? summary.errors.length : 0;
  const rows = applied + skipped + errors;
  const rate = elapsedMs > 0 ? Math.round((rows * 1000) / elapsedMs) : 0;
  const n = (value: number) => value.toLocaleString('en-US');
  const failure = summary.failure as { error?: string } | undefined;
  return [
    failure ? `au:apply failed (${failure.error ?? 'run failed'}): ` : 'au:apply: ',
    `applied ${n(applied)}, skipped ${n(skipped)}, ${n(errors)} error${errors === 1 ? '' : 's'} in ${n(rows)} rows, ${duration(elapsedMs)} (${n(rate)} rows/s)`,
    errorsFile ? `; every error in ${errorsFile}` : '',
    failure ? '; apply the file again to complete it' : '',
  ].join('');
}
