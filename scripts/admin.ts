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
 * npm run --silent admin -- --help | <command> --help
 */
import { parseArgs } from 'node:util';
import { NotFound } from '#shared/domain/errors.ts';
import { Help, runCli, UsageError } from './cli.ts';
import { applyTarget } from './target.ts';

interface Command {
  /** Arguments after the command's name, as the usage line shows them. */
  synopsis: string;
  summary: string;
  /** Positional arguments after the command: how many are required, how many allowed. */
  required: number;
  allowed: number;
  /** Options of this command besides --stack and --help. */
  options: readonly string[];
  /** More lines for `admin <command> --help`. */
  details?: string;
}

const COMMANDS: Readonly<Record<string, Command>> = {
  'create-organization': { synopsis: 'org_<id> [--parent org_<id>]', summary: 'register an organization (a merchant under a partner with --parent)', required: 1, allowed: 1, options: ['parent'], details: 'Prints {"organization_id", "parent_organization_id"}. An existing id is ORGANIZATION_EXISTS (exit 1).' },
  'create-credentials': { synopsis: 'org_<id>', summary: 'issue an API credential; the secure key is printed once', required: 1, allowed: 1, options: [], details: 'Prints {"organization_id", "api_access_id", "api_secure_key"}. The secure key is stored only as a keyed hash: keep it now.' },
  'list-credentials': { synopsis: 'org_<id>', summary: "list an organization's credentials (no secrets)", required: 1, allowed: 1, options: [], details: 'Prints [{"api_access_id", "organization_id", "created_at", "last_used_at"}]; last_used_at may lag by up to a minute.' },
  'revoke-credentials': { synopsis: '<api_access_id>', summary: 'revoke a credential and flush the authorizer cache', required: 1, allowed: 1, options: [], details: 'Prints {"api_access_id", "revoked": true}; every request with it is 401 from then on. An unknown id exits 2.' },
  'create-publishable-key': { synopsis: 'org_<id> loc_<id> --origin <https://origin> [--origin ...] [--mints-per-minute <n>]', summary: "issue a publishable key for a location's checkout pages", required: 2, allowed: 2, options: ['origin', 'mints-per-minute'], details: 'Prints {"publishable_key", "organization_id", "location_id", "allowed_origins"}. At least one --origin.' },
  'list-publishable-keys': { synopsis: 'org_<id> [loc_<id>]', summary: "list an organization's (or a location's) publishable keys", required: 1, allowed: 2, options: [], details: 'Prints [{"publishable_key", "organization_id", "location_id", "allowed_origins", "created_at"}].' },
  'revoke-publishable-key': { synopsis: 'pk_...', summary: 'revoke a publishable key and flush the authorizer cache', required: 1, allowed: 1, options: [], details: 'Prints {"publishable_key", "revoked": true}. An unknown key exits 2.' },
  'set-paypal-credentials': { synopsis: '--client-id <id>', summary: 'store the PayPal REST client credentials (the secret on standard input)', required: 0, allowed: 0, options: ['client-id'], details: 'Reads the client secret from standard input (never an argument: it would show in the shell history and ps).\nPrints {"secret_arn", "client_id", "updated": true}; the secret is never printed.' },
  'index-status': { synopsis: '[--wait]', summary: "whether every index of the table can be read (while a stack's indexes are upgraded)", required: 0, allowed: 0, options: ['wait'], details: 'Prints {"table", "indexes", "ready"}; exit 3 while an index cannot be read. --wait asks again every 15 seconds, with progress on standard error, until all can.' },
};

const EXIT_CODES = `exit codes:
  0  done (the result is JSON on standard output)
  1  failed (a JSON error on standard error; plain text when it is a terminal)
  2  usage error, or revoking an id that does not exist
  3  index-status: an index cannot be read yet`;

const COMMON_OPTIONS = `options:
  --stack <name>  act on a deployed stack (its outputs name the table, keys and buckets); without it, the local service started by npm start in this folder (same PORT)
  -h, --help      this help; \`admin <command> --help\` for one command`;

const usageLine = (name: string) => `  admin ${name} ${COMMANDS[name]!.synopsis} [--stack <name>]`;
const USAGE = `usage:\n${Object.keys(COMMANDS).map(usageLine).join('\n')}`;

const ADMIN_HELP = `admin: organizations, credentials, publishable keys and settings of the payments API

commands:
${Object.entries(COMMANDS)
  .map(([name, command]) => `  ${name.padEnd(24)}${command.summary}`)
  .join('\n')}

${USAGE}

${COMMON_OPTIONS}

${EXIT_CODES}`;

function commandHelp(name: string): string {
  const command = COMMANDS[name]!;
  return `admin ${name}: ${command.summary}

usage:
${usageLine(name)}
${command.details ? `\n${command.details}\n` : ''}
${COMMON_OPTIONS}

${EXIT_CODES}`;
}

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
          help: { type: 'boolean', short: 'h' },
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
    if (command === 'help') throw new Help(args[0] !== undefined && Object.hasOwn(COMMANDS, args[0]) ? commandHelp(args[0]) : ADMIN_HELP);
    const shape = command !== undefined && Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
    if (parsed.values.help) throw new Help(shape ? commandHelp(command!) : ADMIN_HELP);
    if (!command || !shape) throw new UsageError(command ? `unknown command ${command}\n${USAGE}` : `a command is needed\n${USAGE}`);
    if (args.length < shape.required || args.length > shape.allowed) {
      throw new UsageError(`${command} takes ${shape.required === shape.allowed ? shape.required : `${shape.required} or ${shape.allowed}`} argument${shape.allowed === 1 ? '' : 's'}, not ${args.length}\nusage:\n${usageLine(command)}`);
    }
    for (const [option, value] of Object.entries(parsed.values)) {
      if (value === undefined || option === 'stack' || shape.options.includes(option)) continue;
      const owner = Object.keys(COMMANDS).find((name) => COMMANDS[name]!.options.includes(option));
      throw new UsageError(`--${option} belongs to ${owner}\nusage:\n${usageLine(command)}`);
    }
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
    const publishable = command === 'create-publishable-key';
    if (publishable && !parsed.values.origin?.length) throw new UsageError(`create-publishable-key needs at least one --origin\nusage:\n${usageLine(command)}`);
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
