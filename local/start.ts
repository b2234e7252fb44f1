/**
 * `npm start`: the whole service on this machine, no AWS account, no Docker.
 * PORT (default 3000; the emulators take PORT+1 to PORT+4; 0 makes every port
 * random), LOCAL_SEED (organizations and credentials to seed), LOCAL_DATA_DIR
 * (persist stores there; in memory when unset).
 *
 * Stopping: SIGINT, SIGTERM or SIGHUP, to this process or to its whole process
 * group, closes everything in order; a second signal exits at once, and the
 * synchronous exit steps (local/cleanup.ts) still remove the runtime file and
 * the S3 emulator's folder, while the children follow their closed pipes.
 */
import path from 'node:path';
import { onExitSync } from './cleanup.ts';
import { MissingJavaError } from './dynamodb-local.ts';
import { REPO_ROOT, startLocalRuntime } from './runtime.ts';
import type { LocalRuntime } from './runtime.ts';
import { removeRuntimeFile, removeRuntimeFileSync, writeRuntimeFile } from './runtime-file.ts';
import { readSeedFile } from './seed.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const startedAt = Date.now();
const port = Number(process.env.PORT ?? 3000);
const dataDir = process.env.LOCAL_DATA_DIR ? path.resolve(process.env.LOCAL_DATA_DIR) : undefined;
const quiet = process.env.LOCAL_ACCESS_LOG === 'off';

let runtime: LocalRuntime | undefined;
let stopping = false;

async function stop(reason: string): Promise<void> {
  if (stopping) {
    console.log(`${reason} received again, exiting now.`);
    process.exit(1); // the exit steps still remove the files; the children follow their closed pipes
  }
  stopping = true;
  console.log(`\n${reason} received, stopping...`);
  try {
    if (runtime) {
      await removeRuntimeFile(REPO_ROOT, runtime.port);
      await runtime.close();
    }
  } finally {
    process.exit(0);
  }
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop(signal));
// `npm start` runs us under npm; if npm goes away without passing a signal on,
// stop rather than linger as an orphan (unless already stopping).
const parentAtStart = process.ppid;
setInterval(() => {
  if (process.ppid !== parentAtStart && !stopping) void stop('parent exit');
}, 500).unref();

try {
  const seed = process.env.LOCAL_SEED ? await readSeedFile(path.resolve(process.env.LOCAL_SEED)) : undefined;
  runtime = await startLocalRuntime({
    port,
    dataDir,
    seed,
    // The webhook retry steps after the first, shortened for a local run (the first keeps its 5-15 s).
    ...(process.env.WEBHOOK_LATER_RETRY_CAP_SECONDS ? { webhookLaterRetryCapSeconds: Number(process.env.WEBHOOK_LATER_RETRY_CAP_SECONDS) } : {}),
    log: quiet ? undefined : (line) => console.log(JSON.stringify({ level: 'INFO', service: 'local-api-gateway', ...line })),
  });
  const startedPort = runtime.port;
  onExitSync(() => removeRuntimeFileSync(REPO_ROOT, startedPort));
  await writeRuntimeFile(REPO_ROOT, runtime.port, { pid: process.pid, url: runtime.url, handlerEnvironment: runtime.handlerEnvironment, adminToken: runtime.adminToken });
  printBanner(runtime);
} catch (error) {
  console.error(error instanceof MissingJavaError ? `\n${error.message}\n` : error);
  await runtime?.close();
  process.exit(1);
}

function printBanner(started: LocalRuntime): void {
  const lines = [
    '',
    `Payments API (local) listening on ${started.url}  [ready in ${Date.now() - startedAt} ms]`,
    `  DynamoDB Local ${started.endpoints.dynamodb} · S3 (s3rver) ${started.endpoints.s3}, both behind the signature and grants checks · KMS stand-in ${started.endpoints.kms} · PayPal stand-in ${started.endpoints.paypal} · Secrets Manager stand-in ${started.endpoints.secretsManager}`,
    `  Storage: ${dataDir ? `persisted in ${dataDir}` : 'in memory (set LOCAL_DATA_DIR=<folder> to keep data)'}`,
    `  Domain events: ${path.relative(process.cwd(), started.eventsFile) || started.eventsFile} (one EventBridge event per line)`,
    '',
  ];
  if (process.env.LOCAL_SEED) {
    lines.push(`Seeded from ${process.env.LOCAL_SEED}:`);
    for (const credential of started.issuedCredentials) lines.push(`  ${credential.organization_id}  api_access_id=${credential.api_access_id}`);
  }
  const demo = started.issuedCredentials[0];
  if (demo && !process.env.LOCAL_SEED) {
    lines.push(
      'Demo credentials (shown once):',
      `  organization_id: ${demo.organization_id}`,
      `  api_access_id:   ${demo.api_access_id}`,
      `  api_secure_key:  ${demo.api_secure_key}`,
    );
  }
  if (demo) {
    const secret = process.env.LOCAL_SEED ? '<api_secure_key>' : demo.api_secure_key;
    lines.push(
      '',
      'Try:',
      `  curl -s -u '${demo.api_access_id}:${secret}' -H 'X-Service-Auth-Organization-Id: ${demo.organization_id}' ${started.url}/v3/organizations/${demo.organization_id}/paymethods`,
    );
  }
  if (started.demo) {
    lines.push(
      '',
      `Demo checkout: ${started.demo.url}`,
      `  publishable_key: ${started.demo.publishableKey.publishable_key}  (${started.demo.publishableKey.organization_id}/${started.demo.publishableKey.location_id}, origin ${started.demo.publishableKey.allowed_origins.join(', ')})`,
    );
  }
  lines.push('', 'Press Ctrl+C to stop.', '');
  console.log(lines.join('\n'));
}
