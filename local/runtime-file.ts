import { rmSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * While `npm start` runs it leaves `.local/runtime-<port>.json` in the project,
 * so the CLIs started from the same folder with the same PORT find its stores.
 */
export interface RuntimeFile {
  pid: number;
  url: string;
  /** What the CLIs apply to reach the stores, the operator's signing credential (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) included: the file is 0600. */
  handlerEnvironment: Record<string, string>;
  /** Bearer token of the runtime's loopback admin endpoint (authorizer cache flush); the file is 0600. */
  adminToken: string;
}

/** The runtime's loopback admin endpoint that flushes the emulator's authorizer cache (POST, Bearer adminToken). */
export const ADMIN_FLUSH_PATH = '/__local/authorizer-cache/flush';

export function runtimeFilePath(projectDir: string, port: number): string {
  return path.join(projectDir, '.local', `runtime-${port}.json`);
}

/** Where the local runtime on `port` appends its domain events, one EventBridge event per line. */
export function eventsFilePath(projectDir: string, port: number): string {
  return path.join(projectDir, '.local', `events-${port}.jsonl`);
}

export async function writeRuntimeFile(projectDir: string, port: number, content: RuntimeFile): Promise<void> {
  await mkdir(path.join(projectDir, '.local'), { recursive: true });
  const file = runtimeFilePath(projectDir, port);
  // Created afresh, so the mode applies (one left behind by a killed runtime would keep its own).
  await rm(file, { force: true });
  await writeFile(file, JSON.stringify(content, null, 2), { mode: 0o600, flag: 'wx' });
}

export async function removeRuntimeFile(projectDir: string, port: number): Promise<void> {
  await rm(runtimeFilePath(projectDir, port), { force: true });
}

/** For exit handlers, which cannot await. */
export function removeRuntimeFileSync(projectDir: string, port: number): void {
  rmSync(runtimeFilePath(projectDir, port), { force: true });
}

export async function readRuntimeFile(projectDir: string, port: number): Promise<RuntimeFile | undefined> {
  let content: RuntimeFile;
  try {
    content = JSON.parse(await readFile(runtimeFilePath(projectDir, port), 'utf8')) as RuntimeFile;
  } catch {
    return undefined;
  }
  try {
    process.kill(content.pid, 0);
  } catch {
    return undefined; // left behind by a runtime that was killed
  }
  return content;
}
