/**
 * npm run --silent admin -- create-organization org_<id> [--parent org_<id>] [--stack <name>]
 * npm run --silent admin -- create-credentials org_<id> [--stack <name>]
 */
import { parseArgs } from 'node:util';
import { runCli, UsageError } from './cli.ts';
import { applyTarget } from './target.ts';

const USAGE = `usage:
  admin create-organization org_<id> [--parent org_<id>] [--stack <name>]
  admin create-credentials org_<id> [--stack <name>]`;

await runCli(async () => {
  let parsed;
  try {
    parsed = parseArgs({ allowPositionals: true, options: { parent: { type: 'string' }, stack: { type: 'string' } } });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  const [command, organizationId, ...extra] = parsed.positionals;
  if (!command || !organizationId || extra.length > 0) throw new UsageError(USAGE);
  if (command !== 'create-organization' && command !== 'create-credentials') throw new UsageError(`unknown command ${command}\n${USAGE}`);
  if (command === 'create-credentials' && parsed.values.parent) throw new UsageError(`--parent belongs to create-organization\n${USAGE}`);

  await applyTarget(parsed.values.stack);
  // Imported after the target is applied: these modules build their AWS clients from it.
  const { adminDependencies } = await import('./admin-dependencies.ts');
  const deps = adminDependencies();
  if (command === 'create-organization') {
    const { registerOrganization } = await import('#shared/domain/tenancy.ts');
    return registerOrganization({ organizationId, parentOrganizationId: parsed.values.parent }, deps.organizations);
  }
  const { issueCredential } = await import('#shared/domain/credentials.ts');
  return issueCredential({ organizationId }, deps);
});
