/**
 * npm run --silent admin -- create-organization org_<id> [--parent org_<id>] [--stack <name>]
 * npm run --silent admin -- create-credentials org_<id> [--stack <name>]
 * npm run --silent admin -- list-credentials org_<id> [--stack <name>]
 * npm run --silent admin -- revoke-credentials <api_access_id> [--stack <name>]
 * npm run --silent admin -- create-publishable-key org_<id> loc_<id> --origin https://shop.example [--origin ...] [--mints-per-minute <n>] [--stack <name>]
 * npm run --silent admin -- list-publishable-keys org_<id> [loc_<id>] [--stack <name>]
 * npm run --silent admin -- revoke-publishable-key pk_... [--stack <name>]
 * npm run --silent admin -- set-paypal-credentials --client-id <id> [--stack <name>]   (client secret on stdin)
 * npm run --silent admin -- index-status [--wait] [--stack <name>]
 */
import { parseArgs } from 'node:util';
import { NotFound } from '#shared/domain/errors.ts';
import { runCli, UsageError } from './cli.ts';
import { applyTarget } from './target.ts';

const USAGE = `usage:
  admin create-organization org_<id> [--parent org_<id>] [--stack <name>]
  admin create-credentials org_<id> [--stack <name>]
  admin list-credentials org_<id> [--stack <name>]
  admin revoke-credentials <api_access_id> [--stack <name>]
  admin create-publishable-key org_<id> loc_<id> --origin <https://origin> [--origin ...] [--mints-per-minute <n>] [--stack <name>]
  admin list-publishable-keys org_<id> [loc_<id>] [--stack <name>]
  admin revoke-publishable-key pk_... [--stack <name>]
  admin set-paypal-credentials --client-id <id> [--stack <name>]   (the client secret on standard input)
  admin index-status [--wait] [--stack <name>]   (exit 0 once every index of the table can be read, 3 while one cannot)`;

/** Positional arguments after the command: how many are required, how many allowed. */
const COMMANDS: Readonly<Record<string, { required: number; allowed: number }>> = {
  'create-organization': { required: 1, allowed: 1 },
  'create-credentials': { required: 1, allowed: 1 },
  'list-credentials': { required: 1, allowed: 1 },
  'revoke-credentials': { required: 1, allowed: 1 },
  'create-publishable-key': { required: 2, allowed: 2 },
  'list-publishable-keys': { required: 1, allowed: 2 },
  'revoke-publishable-key': { required: 1, allowed: 1 },
  'set-paypal-credentials': { required: 0, allowed: 0 },
  'index-status': { required: 0, allowed: 0 },
};

/** How often `index-status --wait` asks DynamoDB again. */
const INDEX_STATUS_INTERVAL_MS = 15_000;
/** `index-status` while an index cannot be read yet: distinct from a failure (1) and a usage error (2). */
const INDEXES_NOT_READY = 3;

let invoked: string | undefined;
await runCli(
  async () => {
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
          wait: { type: 'boolean' },
        },
      });
    } catch (error) {
      throw new UsageError(`${(error as Error).message}\n${USAGE}`);
    }
    const [command, ...args] = parsed.positionals;
    invoked = command;
    const shape = command === undefined ? undefined : COMMANDS[command];
    if (!command || !shape) throw new UsageError(command ? `unknown command ${command}\n${USAGE}` : USAGE);
    if (args.length < shape.required || args.length > shape.allowed) throw new UsageError(USAGE);
    if (command !== 'index-status' && parsed.values.wait) throw new UsageError(`--wait belongs to index-status\n${USAGE}`);
    if (command === 'index-status') {
      await applyTarget(parsed.values.stack);
      const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
      const { indexStatus, waitForIndexes } = await import('./index-status.ts');
      const { config } = await import('#shared/runtime/config.ts');
      const client = new DynamoDBClient({});
      const status = parsed.values.wait
        ? await waitForIndexes(client, config.tableName, { intervalMs: INDEX_STATUS_INTERVAL_MS, onPending: (pending) => process.stderr.write(`${JSON.stringify(pending)}\n`) })
        : await indexStatus(client, config.tableName);
      if (!status.ready) process.exitCode = INDEXES_NOT_READY;
      return status;
    }
    if (command === 'set-paypal-credentials') {
      // The stack's secret, or the local runtime's (its Secrets Manager stand-in): the one the functions read.
      await applyTarget(parsed.values.stack);
      const { setPaypalCredentials } = await import('./paypal-credentials.ts');
      return setPaypalCredentials({
        clientId: parsed.values['client-id'],
        secretArn: process.env.PAYPAL_SECRET_ARN,
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
    if (command !== 'create-organization' && parsed.values.parent) throw new UsageError(`--parent belongs to create-organization\n${USAGE}`);
    if (!publishable && (parsed.values.origin || parsed.values['mints-per-minute'])) throw new UsageError(`--origin and --mints-per-minute belong to create-publishable-key\n${USAGE}`);
    if (publishable && !parsed.values.origin?.length) throw new UsageError(`create-publishable-key needs at least one --origin\n${USAGE}`);
    const mintsPerMinute = parsed.values['mints-per-minute'] === undefined ? undefined : Number(parsed.values['mints-per-minute']);
    const [first = '', second] = args;

    await applyTarget(parsed.values.stack);
    // Imported after the target is applied: these modules build their AWS clients from it.
    const { adminDependencies } = await import('./admin-dependencies.ts');
    const deps = adminDependencies();
    switch (command) {
      case 'create-organization': {
        const { registerOrganization } = await import('#shared/domain/tenancy.ts');
        return registerOrganization({ organizationId: first, parentOrganizationId: parsed.values.parent }, deps.organizations);
      }
      case 'create-publishable-key': {
        const { issuePublishableKey } = await import('#shared/domain/publishable-keys.ts');
        const key = await issuePublishableKey({ organizationId: first, locationId: second ?? '', allowedOrigins: parsed.values.origin ?? [], mintsPerMinute }, deps);
        return { publishable_key: key.publishable_key, organization_id: key.organization_id, location_id: key.location_id, allowed_origins: key.allowed_origins };
      }
      case 'list-credentials': {
        const { listCredentials } = await import('#shared/domain/credentials.ts');
        return listCredentials(first, deps.credentials);
      }
      case 'revoke-credentials': {
        const { revokeCredential } = await import('#shared/domain/credentials.ts');
        return afterFlush(await revokeCredential(first, deps.credentials));
      }
      case 'list-publishable-keys': {
        const { listPublishableKeys } = await import('#shared/domain/publishable-keys.ts');
        return listPublishableKeys({ organizationId: first, ...(second === undefined ? {} : { locationId: second }) }, deps.publishableKeys);
      }
      case 'revoke-publishable-key': {
        const { revokePublishableKey } = await import('#shared/domain/publishable-keys.ts');
        return afterFlush(await revokePublishableKey(first, deps.publishableKeys));
      }
      default: {
        const { issueCredential } = await import('#shared/domain/credentials.ts');
        return issueCredential({ organizationId: first }, deps);
      }
    }
  },
  // The contract: revoking an unknown id exits 2.
  (error) => (error instanceof NotFound && invoked?.startsWith('revoke-') ? 2 : undefined),
);

/**
 * The store refuses the credential from now on; cached authorizer answers would
 * still accept it for up to the cache TTL, so the command returns only once
 * they are flushed. A failed flush, or no cache it can flush, fails the
 * command: run it again (revoking is idempotent) against the stack or the
 * running local service until it succeeds.
 */
async function afterFlush<T>(result: T): Promise<T> {
  const { flushAuthorizerCache } = await import('./authorizer-cache.ts');
  const outcome = await flushAuthorizerCache();
  if (outcome.flushed === 'none') throw new Error(`revoked in the store, but no authorizer cache was flushed: ${outcome.reason}`);
  return result;
}
