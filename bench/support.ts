import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { readRuntimeFile } from '../local/runtime-file.ts';
import type { RuntimeFile } from '../local/runtime-file.ts';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export interface StartedRuntime {
  url: string;
  runtime: RuntimeFile;
  /** From spawning `npm start` to the first answered HTTP request. */
  firstAnswerMs: number;
  stop(): Promise<void>;
}

/** Starts the local runtime the way a user does and times it to its first answer. */
export async function startRuntimeForBench(env: Record<string, string> = {}): Promise<StartedRuntime> {
  const startedAt = performance.now();
  const child = spawn('npm', ['start'], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', LOCAL_ACCESS_LOG: 'off', LOCAL_SEED: 'test/fixtures/seed.json', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let port: number | undefined;
  let firstAnswerMs: number | undefined;
  while (firstAnswerMs === undefined) {
    if (child.exitCode !== null) throw new Error(`npm start exited: ${output}`);
    port ??= Number(/listening on http:\/\/localhost:(\d+)/.exec(output)?.[1]) || undefined;
    if (port) {
      try {
        await fetch(`http://localhost:${port}/v3/`);
        firstAnswerMs = performance.now() - startedAt;
      } catch {
        // not listening yet
      }
    }
    if (firstAnswerMs === undefined) await sleep(20);
  }
  const runtime = await readRuntimeFile(REPO_ROOT, port as number);
  if (!runtime) throw new Error('no runtime file');
  return {
    url: `http://localhost:${port}`,
    runtime,
    firstAnswerMs,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      await exited;
    },
  };
}
