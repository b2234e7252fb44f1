import { GetSecretValueCommand, PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENTS_PATH } from '#local/paypal-standin.ts';
import { eventsFilePath, readRuntimeFile } from '#local/runtime-file.ts';
import { PAYPAL_UNSET_CLIENT_ID } from '#shared/platform/paypal-secret.ts';
import { MERCHANT, authHeaders } from '../support/api.ts';
import { followRuntime } from '../support/local-process.ts';
import { PAYPAL, locationPath, unique } from '../support/paymethods.ts';

/**
 * The PayPal routes read their client credentials locally as in AWS: from the
 * PaypalCredentials secret (PAYPAL_SECRET_ARN), in the runtime's Secrets
 * Manager stand-in, once per function container. This file starts its own
 * runtime with a data directory, so the secret it changes is its own, and
 * restarts it to get new containers.
 */
const repoRoot = path.resolve(import.meta.dirname, '../..');

interface Runtime {
  port: number;
  environment: Record<string, string>;
  stop(): Promise<void>;
}

async function startRuntime(dataDir: string): Promise<Runtime> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
    cwd: repoRoot,
    env: { ...process.env, PORT: '0', LOCAL_ACCESS_LOG: 'off', LOCAL_SEED: 'test/fixtures/seed.json', LOCAL_DATA_DIR: dataDir, AUTHORIZER_CACHE_TTL_SECONDS: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { exited, listening } = followRuntime(child);
  const port = await listening;
  const file = await readRuntimeFile(repoRoot, port);
  if (!file) throw new Error('local runtime left no runtime file');
  return {
    port,
    environment: file.handlerEnvironment,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      // With LOCAL_DATA_DIR the runtime keeps its events file, as it keeps the data: this test's is its own to remove.
      await rm(eventsFilePath(repoRoot, port), { force: true });
    },
  };
}

/** `npm run --silent admin -- ...` aimed at `port`, with `stdin` piped in. */
function admin(port: number, stdin: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'admin', '--', ...args], { cwd: repoRoot, env: { ...process.env, PORT: String(port) }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

async function createPaypal(runtime: Runtime) {
  const response = await fetch(`http://localhost:${runtime.port}${locationPath(MERCHANT.organizationId, unique('loc_'))}/paymethods`, {
    method: 'POST',
    headers: { ...authHeaders(MERCHANT), Accept: 'application/json', 'Content-Type': 'application/json' },
    body: JSON.stringify({ vendor: PAYPAL }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> & { response: { response_code?: string; response_desc: string } } };
}

/** Which client ids the PayPal stand-in issued access tokens to since it started. */
async function paypalClients(runtime: Runtime): Promise<Record<string, number>> {
  return (await (await fetch(`${runtime.environment.PAYPAL_API_URL}${CLIENTS_PATH}`)).json()) as Record<string, number>;
}

function secretsClient(runtime: Runtime): SecretsManagerClient {
  const { AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL_SECRETS_MANAGER } = runtime.environment;
  expect(AWS_ENDPOINT_URL_SECRETS_MANAGER).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  return new SecretsManagerClient({
    region: AWS_REGION,
    endpoint: AWS_ENDPOINT_URL_SECRETS_MANAGER,
    credentials: { accessKeyId: AWS_ACCESS_KEY_ID as string, secretAccessKey: AWS_SECRET_ACCESS_KEY as string },
  });
}

async function storedSecret(runtime: Runtime): Promise<unknown> {
  const client = secretsClient(runtime);
  try {
    const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: runtime.environment.PAYPAL_SECRET_ARN }));
    return JSON.parse(SecretString ?? '');
  } finally {
    client.destroy();
  }
}

describe('PayPal client credentials in the local runtime', { timeout: 180_000 }, () => {
  let dataDir: string;
  let runtime: Runtime | undefined;
  let secretArn: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'paypal-secret-'));
    runtime = await startRuntime(dataDir);
  });

  afterAll(async () => {
    await runtime?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const running = (): Runtime => {
    if (!runtime) throw new Error('the runtime did not start');
    return runtime;
  };
  const restart = async (): Promise<Runtime> => {
    await running().stop();
    runtime = undefined;
    runtime = await startRuntime(dataDir);
    return runtime;
  };

  it('gives PayPal functions the secret as the stack does, and no plain credentials', async () => {
    const { environment } = running();
    secretArn = environment.PAYPAL_SECRET_ARN as string;
    expect(secretArn).toMatch(/^arn:aws:secretsmanager:us-east-1:000000000000:secret:PaypalCredentials-[A-Za-z0-9]{6}$/);
    expect(environment).not.toHaveProperty('PAYPAL_CLIENT_ID');
    expect(environment).not.toHaveProperty('PAYPAL_CLIENT_SECRET');
    // Created at first start, holding a pair the PayPal stand-in takes.
    expect(await storedSecret(running())).toEqual({ client_id: 'local-paypal-client', client_secret: 'local-paypal-secret' });
  });

  it('creates a PayPal paymethod with the pair the secret holds', async () => {
    // Stored before any PayPal function ran: whatever the secret holds is what they send.
    const client = secretsClient(running());
    await client.send(new PutSecretValueCommand({ SecretId: secretArn, SecretString: JSON.stringify({ client_id: 'AXfromsecret', client_secret: 'EKfromsecret' }) }));
    client.destroy();
    const created = await createPaypal(running());
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(await paypalClients(running())).toEqual({ AXfromsecret: 1 });
  });

  it('admin set-paypal-credentials writes the secret locally, without --stack; containers that read it keep their pair, new ones take the new', async () => {
    const set = await admin(running().port, 'EKoperator-secret\n', 'set-paypal-credentials', '--client-id', 'AXoperator');
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ secret_arn: secretArn, client_id: 'AXoperator', updated: true });
    expect(set.stdout).not.toContain('EKoperator');
    expect(await storedSecret(running())).toEqual({ client_id: 'AXoperator', client_secret: 'EKoperator-secret' });

    // The running container read its pair once, as a Lambda container does.
    expect((await createPaypal(running())).status).toBe(201);
    expect(await paypalClients(running())).toEqual({ AXfromsecret: 1 });

    // New containers read the secret again; the stored pair outlives the restart (it is not created anew).
    const restarted = await restart();
    expect(restarted.environment.PAYPAL_SECRET_ARN).toBe(secretArn);
    expect(await storedSecret(restarted)).toEqual({ client_id: 'AXoperator', client_secret: 'EKoperator-secret' });
    expect((await createPaypal(restarted)).status).toBe(201);
    expect(await paypalClients(restarted)).toEqual({ AXoperator: 1 });
  });

  it("answers 503 'PayPal is not configured' while the secret holds a fresh stack's placeholder", async () => {
    // What the stack's secret holds until an operator stores a pair.
    const client = secretsClient(running());
    await client.send(new PutSecretValueCommand({ SecretId: secretArn, SecretString: JSON.stringify({ client_id: PAYPAL_UNSET_CLIENT_ID, client_secret: 'generated' }) }));
    client.destroy();
    const restarted = await restart();

    const refused = await createPaypal(restarted);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body.response.response_code).toBe('SERVICE_UNAVAILABLE');
    expect(refused.body.response.response_desc).toMatch(/PayPal is not configured/);
    expect(await paypalClients(restarted)).toEqual({});

    // A failed read is not kept: once the pair is stored, the next request reads it.
    expect((await admin(restarted.port, 'EKagain\n', 'set-paypal-credentials', '--client-id', 'AXagain')).code).toBe(0);
    expect((await createPaypal(restarted)).status).toBe(201);
    expect(await paypalClients(restarted)).toEqual({ AXagain: 1 });
  });
});
