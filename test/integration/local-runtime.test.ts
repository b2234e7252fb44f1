import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runtimeFilePath } from '../../local/runtime-file.ts';
import { followRuntime } from '../support/local-process.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');

function startRuntime(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
    cwd: repoRoot,
    env: { ...process.env, PORT: '0', LOCAL_ACCESS_LOG: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { output, exited, listening: ready } = followRuntime(child);
  return { child, ready, exited, output };
}

function descendantPids(pid: number): number[] {
  let children: number[];
  try {
    children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).split('\n').map(Number).filter(Boolean);
  } catch {
    children = [];
  }
  return children.flatMap((child) => [child, ...descendantPids(child)]);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('npm start', () => {
  it('prints demo credentials and a curl line that work, and stops cleanly on SIGTERM', async () => {
    const runtime = startRuntime({});
    onTestFinished(() => void runtime.child.kill('SIGKILL'));
    const port = await runtime.ready;
    const output = runtime.output();
    const accessId = /api_access_id:\s+(\S+)/.exec(output)?.[1];
    const secureKey = /api_secure_key:\s+(\S+)/.exec(output)?.[1];
    expect(accessId).toMatch(/^ak_/);
    expect(secureKey).toMatch(/^sk_/);
    expect(output).toContain(`curl -s -u '${accessId}:${secureKey}' -H 'X-Service-Auth-Organization-Id: org_demo' http://localhost:${port}/v3/organizations/org_demo/`);
    expect(existsSync(runtimeFilePath(repoRoot, port))).toBe(true);

    const unauthorized = await fetch(`http://localhost:${port}/v3/organizations/org_demo/paymethods`);
    expect(unauthorized.status).toBe(401);

    const children = descendantPids(runtime.child.pid as number);
    expect(children.length).toBeGreaterThan(0); // DynamoDB Local's JVM and its guard shell
    runtime.child.kill('SIGTERM');
    expect(await runtime.exited).toBe(0);
    expect(children.filter(alive)).toEqual([]);
    expect(existsSync(runtimeFilePath(repoRoot, port))).toBe(false);
  });

  it('names the fix when Java is missing', async () => {
    // A PATH with node on it and no java.
    const binDir = mkdtempSync(path.join(os.tmpdir(), 'no-java-'));
    symlinkSync(process.execPath, path.join(binDir, 'node'));
    const runtime = startRuntime({ PATH: binDir });
    onTestFinished(() => void runtime.child.kill('SIGKILL'));
    await expect(runtime.ready).rejects.toThrow(/needs Java.*(apt-get install|brew install)/s);
    expect(await runtime.exited).toBe(1);
  });
});
