/**
 * npm run --silent backfill-fingerprints -- [--stack <name>] [--organization org_<id>] [--resume <token>] [--page-size <n>] [--max-pages <n>]
 *
 * Gives every card and echeck written before fingerprints existed its
 * fingerprint (docs/operations.md, "Fingerprint backfill"). One JSON line per
 * page on stderr; the summary on stdout, with `resume_token` while records remain.
 * Needs kms:Decrypt on the vault key and kms:GenerateMac on the fingerprint key.
 */
import { parseArgs } from 'node:util';
import { runCli, UsageError } from './cli.ts';
import { applyTarget } from './target.ts';

const USAGE = 'usage: backfill-fingerprints [--stack <name>] [--organization org_<id>] [--resume <token>] [--page-size <1-1000>] [--max-pages <n>]';

function count(value: string | undefined, name: string, max: number): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1 || parsed > max) throw new UsageError(`--${name} must be an integer from 1 to ${max}\n${USAGE}`);
  return parsed;
}

await runCli(async () => {
  let parsed;
  try {
    parsed = parseArgs({ options: { stack: { type: 'string' }, organization: { type: 'string' }, resume: { type: 'string' }, 'page-size': { type: 'string' }, 'max-pages': { type: 'string' } } });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  const pageSize = count(parsed.values['page-size'], 'page-size', 1000);
  const maxPages = count(parsed.values['max-pages'], 'max-pages', Number.MAX_SAFE_INTEGER);
  await applyTarget(parsed.values.stack);
  // Imported after the target is applied: these modules build their AWS clients from it.
  const { backfillFingerprints } = await import('#shared/domain/paymethods/backfill-fingerprints.ts');
  const { backfillDeps } = await import('#shared/wiring/fingerprint-backfill.ts');
  return backfillFingerprints(
    { resume: parsed.values.resume, pageSize, maxPages, organizationId: parsed.values.organization, onPage: (progress) => process.stderr.write(`${JSON.stringify(progress)}\n`) },
    backfillDeps(),
  );
});
