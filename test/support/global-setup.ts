import { spawn } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { REFUSED_CALL } from '../../local/function-identity.ts';
import { eventsFilePath, readRuntimeFile } from '../../local/runtime-file.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');
export const RUNTIME_LOG = path.join(repoRoot, 'test-output', 'local-runtime.log');

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
    runtimeEnvironment: Record<string, string>;
    runtimeLog: string;
    runtimePort: number;
  }
}

/**
 * Integration tests run against the service exactly as a user starts it:
 * `npm start` in a child process (its log kept for the redaction tests), seeded
 * with a partner, its merchant and an unrelated organization.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  return startRuntimeChild(project, { logFile: RUNTIME_LOG, env: { LOCAL_SEED: 'test/fixtures/seed.json' } });
}

/** Starts `npm start`'s entry point with `env` added, and provides its address to the project's tests. */
export async function startRuntimeChild(project: TestProject, options: { logFile: string; env: Record<string, string> }): Promise<() => Promise<void>> {
  await mkdir(path.dirname(options.logFile), { recursive: true });
  const log = createWriteStream(options.logFile);
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
    cwd: repoRoot,
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'DEBUG', AUTHORIZER_CACHE_TTL_SECONDS: '0', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.pipe(log);
  child.stderr.pipe(log);

  const port = await new Promise<number>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`local runtime did not start in 240 s:\n${seen}`)), 240_000);
    child.stdout.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /listening on http:\/\/localhost:(\d+)/.exec(seen);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (seen += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`local runtime exited with ${code}:\n${seen}`)));
  });
  const runtime = await readRuntimeFile(repoRoot, port);
  if (!runtime) throw new Error('local runtime left no runtime file');

  project.provide('baseUrl', `http://localhost:${port}`);
  project.provide('runtimeEnvironment', runtime.handlerEnvironment);
  project.provide('runtimeLog', options.logFile);
  project.provide('runtimePort', port);

  return async () => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    log.end();
    // Its ports were random: nothing it leaves could be found again.
    const eventsFile = eventsFilePath(repoRoot, port);
    if (existsSync(eventsFile)) throw new Error(`the local runtime left ${eventsFile} behind`);
    // A call a function's grants do not allow (DynamoDB, KMS) would fail in AWS: none may happen in any test, even one a handler survives.
    const refused = (await readFile(options.logFile, 'utf8')).split('\n').filter((line) => line.includes(REFUSED_CALL));
    if (refused.length) throw new Error(`functions made calls their grants do not allow:\n${refused.slice(0, 10).join('\n')}`);
  };
}
