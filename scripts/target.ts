/**
 * Where a CLI acts: a deployed stack (`--stack <name>`, read from its
 * CloudFormation outputs), explicit environment variables (TABLE_NAME and
 * friends, as in Lambda), or the `npm start` runtime running from this folder
 * on the same PORT. The chosen environment is applied to process.env before
 * any shared module builds an AWS client.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readRuntimeFile } from '../local/runtime-file.ts';
import type { RuntimeFile } from '../local/runtime-file.ts';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Stack output name -> environment variable the shared modules read. */
const OUTPUT_TO_ENVIRONMENT: Readonly<Record<string, string>> = {
  TableName: 'TABLE_NAME',
  AccountUpdaterHistoryTableName: 'AU_HISTORY_TABLE_NAME',
  DocumentsBucketName: 'DOCUMENTS_BUCKET',
  ReportsBucketName: 'REPORTS_BUCKET',
  VaultKeyId: 'VAULT_KEY_ID',
  CredentialMacKeyId: 'CREDENTIAL_MAC_KEY_ID',
  FingerprintKeyId: 'FINGERPRINT_KEY_ID',
  PaypalSecretArn: 'PAYPAL_SECRET_ARN',
  EnvironmentName: 'ENVIRONMENT_NAME',
  // For the revoke commands' authorizer cache flush.
  RestApiId: 'REST_API_ID',
  StageName: 'API_STAGE',
};

export class TargetNotFound extends Error {}

export type AppliedTarget = { kind: 'stack'; stackName: string } | { kind: 'environment' } | { kind: 'local'; runtime: RuntimeFile };
let applied: AppliedTarget | undefined;

/** What applyTarget chose (the revoke commands flush that target's authorizer cache). */
export function appliedTarget(): AppliedTarget {
  if (!applied) throw new Error('applyTarget has not run');
  return applied;
}

export async function applyTarget(stackName: string | undefined): Promise<string> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  if (stackName) {
    Object.assign(process.env, await stackEnvironment(stackName));
    applied = { kind: 'stack', stackName };
    return `stack ${stackName}`;
  }
  if (process.env.TABLE_NAME) {
    applied = { kind: 'environment' };
    return 'environment variables';
  }
  const port = Number(process.env.PORT ?? 3000);
  const runtime = await readRuntimeFile(REPO_ROOT, port);
  if (!runtime) {
    throw new TargetNotFound(
      `No local runtime is running on port ${port} from ${REPO_ROOT}. Start it with \`npm start\` (same PORT), or pass --stack <name> for a deployed stack.`,
    );
  }
  Object.assign(process.env, runtime.handlerEnvironment);
  applied = { kind: 'local', runtime };
  return `local runtime ${runtime.url}`;
}

async function stackEnvironment(stackName: string): Promise<Record<string, string>> {
  const { CloudFormationClient, DescribeStacksCommand } = await import('@aws-sdk/client-cloudformation');
  const client = new CloudFormationClient({});
  const { Stacks } = await client.send(new DescribeStacksCommand({ StackName: stackName }));
  const outputs = Stacks?.[0]?.Outputs ?? [];
  const environment: Record<string, string> = {};
  for (const output of outputs) {
    const name = output.OutputKey ? OUTPUT_TO_ENVIRONMENT[output.OutputKey] : undefined;
    if (name && output.OutputValue) environment[name] = output.OutputValue;
  }
  if (!environment.TABLE_NAME) throw new TargetNotFound(`Stack ${stackName} has no TableName output; is it a PaymentsApi stack?`);
  return environment;
}
