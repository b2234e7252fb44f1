/**
 * npm run --silent admin -- create-organization org_<id> [--parent org_<id>] [--stack <name>]
 * npm run --silent admin -- create-credentials org_<id> [--stack <name>]
 * npm run --silent admin -- create-publishable-key org_<id> loc_<id> --origin https://shop.example [--origin ...] [--mints-per-minute <n>] [--stack <name>]
 * npm run --silent admin -- set-paypal-credentials --client-id <id> --stack <name>   (client secret on stdin)
 */
import { parseArgs } from 'node:util';
import { runCli, UsageError } from './cli.ts';
import { applyTarget } from './target.ts';

const USAGE = `usage:
  admin create-organization org_<id> [--parent org_<id>] [--stack <name>]
  admin create-credentials org_<id> [--stack <name>]
  admin create-publishable-key org_<id> loc_<id> --origin <https://origin> [--origin ...] [--mints-per-minute <n>] [--stack <name>]
  admin set-paypal-credentials --client-id <id> --stack <name>   (the client secret on standard input)`;

const COMMANDS = ['create-organization', 'create-credentials', 'create-publishable-key', 'set-paypal-credentials'];

await runCli(async () => {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        parent: { type: 'string' },
        stack: { type: 'string' },
        origin: { type: 'string', multiple: true },
        'mints-per-minute': { type: 'string' },
        'client-id': { type: 'string' },
      },
    });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  const [command, organizationId, ...rest] = parsed.positionals;
  if (!command || !COMMANDS.includes(command)) throw new UsageError(command ? `unknown command ${command}\n${USAGE}` : USAGE);
  if (command === 'set-paypal-credentials') {
    if (organizationId) throw new UsageError(USAGE);
    const target = parsed.values.stack ? await applyTarget(parsed.values.stack) : undefined;
    const { setPaypalCredentials } = await import('./paypal-credentials.ts');
    return setPaypalCredentials({
      clientId: parsed.values['client-id'],
      secretArn: target ? process.env.PAYPAL_SECRET_ARN : undefined,
      stdin: process.stdin,
      secrets: {
        async putSecretValue(input) {
          const { SecretsManagerClient, PutSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
          return new SecretsManagerClient({}).send(new PutSecretValueCommand(input));
        },
      },
    });
  }
  if (parsed.values['client-id']) throw new UsageError(`--client-id belongs to set-paypal-credentials\n${USAGE}`);
  const publishable = command === 'create-publishable-key';
  const [locationId, ...extra] = publishable ? rest : [undefined, ...rest];
  if (!organizationId || (publishable && !locationId) || extra.length > 0) throw new UsageError(USAGE);
  if (command !== 'create-organization' && parsed.values.parent) throw new UsageError(`--parent belongs to create-organization\n${USAGE}`);
  if (!publishable && (parsed.values.origin || parsed.values['mints-per-minute'])) throw new UsageError(`--origin and --mints-per-minute belong to create-publishable-key\n${USAGE}`);
  if (publishable && !parsed.values.origin?.length) throw new UsageError(`create-publishable-key needs at least one --origin\n${USAGE}`);
  const mintsPerMinute = parsed.values['mints-per-minute'] === undefined ? undefined : Number(parsed.values['mints-per-minute']);

  await applyTarget(parsed.values.stack);
  // Imported after the target is applied: these modules build their AWS clients from it.
  const { adminDependencies } = await import('./admin-dependencies.ts');
  const deps = adminDependencies();
  if (command === 'create-organization') {
    const { registerOrganization } = await import('#shared/domain/tenancy.ts');
    return registerOrganization({ organizationId, parentOrganizationId: parsed.values.parent }, deps.organizations);
  }
  if (publishable && locationId) {
    const { issuePublishableKey } = await import('#shared/domain/publishable-keys.ts');
    const key = await issuePublishableKey({ organizationId, locationId, allowedOrigins: parsed.values.origin ?? [], mintsPerMinute }, deps);
    return { publishable_key: key.publishable_key, organization_id: key.organization_id, location_id: key.location_id, allowed_origins: key.allowed_origins };
  }
  const { issueCredential } = await import('#shared/domain/credentials.ts');
  return issueCredential({ organizationId }, deps);
});
