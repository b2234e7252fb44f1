import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { eventsFilePath, runtimeFilePath } from '../../local/runtime-file.ts';
import { followRuntime } from '../support/local-process.ts';

/**
 * `npm start` as a user runs it, in its own process group: which ports it
 * takes and on which address, what revocation and the failed-authentication
 * throttle do with the authorizer cache on (300 s, as deployed), and that any
 * signal, once or twice, to npm, to the runtime or to the whole group leaves
 * no process and no file behind.
 */
const repoRoot = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

interface Started {
  npm: ReturnType<typeof spawn>;
  port: number;
  output: () => string;
  /** Every process under npm (the runtime, DynamoDB Local's JVM and its guard, the folder guard). */
  descendants: number[];
  s3Folder: string;
  exited: Promise<void>;
  randomPorts: boolean;
}

async function startNpm(env: Record<string, string>): Promise<Started> {
  const npm = spawn('npm', ['start'], { cwd: repoRoot, env: { ...process.env, LOCAL_ACCESS_LOG: 'off', LOCAL_SEED: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const followed = followRuntime(npm);
  const output = followed.output;
  const exited = followed.exited.then(() => undefined);
  const port = await followed.listening;
  started.push(npm);
  const descendants = descendantPids(npm.pid as number);
  const guard = descendants.map(commandLine).find((line) => line.includes('remove-when-gone'));
  const s3Folder = guard?.split('\0').filter(Boolean).at(-1) ?? '';
  return { npm, port, output, descendants, s3Folder, exited, randomPorts: env.PORT === '0' };
}

const started: Array<ReturnType<typeof spawn>> = [];
afterAll(() => {
  for (const npm of started) {
    try {
      process.kill(-(npm.pid as number), 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

function descendantPids(pid: number): number[] {
  let children: number[];
  try {
    children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).split('\n').map(Number).filter(Boolean);
  } catch {
    children = [];
  }
  return children.flatMap((child) => [child, ...descendantPids(child)]);
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Bounded wait for the processes to go: the JVM follows its closed pipe, the folder guard its own. */
async function leftovers(runtime: Started): Promise<{ processes: number[]; files: string[] }> {
  await runtime.exited;
  const everything = [...runtime.descendants, runtime.npm.pid as number];
  for (let attempt = 0; attempt < 100 && everything.some(alive); attempt += 1) await sleep(100);
  // Without LOCAL_DATA_DIR the events file goes too, whatever the PORT.
  const files = [runtimeFilePath(repoRoot, runtime.port), runtime.s3Folder, eventsFilePath(repoRoot, runtime.port)].filter((file) => existsSync(file));
  return { processes: everything.filter(alive), files };
}

async function freePortRange(count: number): Promise<number> {
  const isFree = (port: number) =>
    new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const base = 20_000 + Math.floor(Math.random() * 40_000);
    const free = await Promise.all(Array.from({ length: count }, (_, offset) => isFree(base + offset)));
    if (free.every(Boolean)) return base;
  }
  throw new Error('no free port range');
}

/** One HTTP request from a chosen loopback source address (the throttle counts per address). */
function request(url: string, options: { headers?: Record<string, string>; from?: string } = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = http.request(url, { headers: options.headers, localAddress: options.from ?? '127.0.0.1', agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

const basic = (id: string, key: string, organizationId = 'org_demo') => ({
  Authorization: `Basic ${Buffer.from(`${id}:${key}`).toString('base64')}`,
  'X-Service-Auth-Organization-Id': organizationId,
});

async function admin(port: number, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const startedAt = performance.now();
  try {
    const { stdout, stderr } = await run('npm', ['run', '--silent', 'admin', '--', ...args], { cwd: repoRoot, env: { ...process.env, PORT: String(port) } });
    return { code: 0, stdout, stderr, ms: performance.now() - startedAt };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr, ms: performance.now() - startedAt };
  }
}

describe('npm start with PORT set, authorizer cache on', { timeout: 300_000 }, () => {
  let runtime: Started;
  let base: number;
  let demo: { id: string; key: string };
  let kmsUrl: string;

  it('takes PORT for the API and PORT+1..PORT+4 for the emulators, all on 127.0.0.1 only', async () => {
    base = await freePortRange(5);
    runtime = await startNpm({ PORT: String(base) });
    expect(runtime.port).toBe(base);
    const output = runtime.output();
    for (const offset of [1, 2, 3, 4]) expect(output).toContain(`http://127.0.0.1:${base + offset}`);
    demo = { id: /api_access_id:\s+(\S+)/.exec(output)?.[1] ?? '', key: /api_secure_key:\s+(\S+)/.exec(output)?.[1] ?? '' };
    kmsUrl = `http://127.0.0.1:${base + 3}`;

    const listening = execFileSync('ss', ['-Hltn'], { encoding: 'utf8' })
      .split('\n')
      .map((line) => line.trim().split(/\s+/)[3] ?? '')
      .filter((address) => [0, 1, 2, 3, 4].some((offset) => address.endsWith(`:${base + offset}`)));
    expect(listening.length).toBe(5);
    for (const address of listening) expect(address).toMatch(/^(127\.0\.0\.1|\[::ffff:127\.0\.0\.1\]):\d+$/);
  });

  it('throttles a source address after 30 failed attempts in a minute, with no KMS call for any attempt; valid credentials keep working from it', async () => {
    const url = `http://127.0.0.1:${base}/v3/organizations/org_demo/paymethods`;
    const macCalls = async () => ((await (await fetch(`${kmsUrl}/__standin/calls`)).json()) as Record<string, number>).GenerateMac ?? 0;
    // Stay inside one clock minute, so the 30 failures share one window.
    if (new Date().getUTCSeconds() > 40) await sleep((61 - new Date().getUTCSeconds()) * 1000);
    // The authorizer derives its hashing key once, at its first attempt.
    expect((await request(url, { headers: basic('ak_unknown', 'warm-up'), from: '127.0.0.5' })).status).toBe(401);

    const before = await macCalls();
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 30; attempt += 1) statuses.push((await request(url, { headers: basic(`ak_guess${attempt}`, `wrong-${attempt}`), from: '127.0.0.3' })).status);
    expect(statuses).toEqual(Array(30).fill(401));
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const answer = await request(url, { headers: basic(attempt % 2 ? demo.id : `ak_unknown${attempt}`, `still-wrong-${attempt}`), from: '127.0.0.3' });
      expect(answer.status).toBe(429);
      expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(answer.headers['retry-after'])).toBeLessThanOrEqual(60);
      expect(JSON.parse(answer.body).response.response_code).toBe('THROTTLED');
    }
    expect((await macCalls()) - before).toBe(0);

    // With the authorizer cache on: the valid key from the throttled address, first and cached, and from another one.
    expect((await request(url, { headers: basic(demo.id, demo.key), from: '127.0.0.3' })).status).toBe(200);
    expect((await request(url, { headers: basic(demo.id, demo.key), from: '127.0.0.3' })).status).toBe(200);
    expect((await request(url, { headers: basic(demo.id, demo.key), from: '127.0.0.4' })).status).toBe(200);
    expect((await request(url, { headers: basic(demo.id, 'wrong'), from: '127.0.0.4' })).status).toBe(401);
  });

  it('revokes a credential so that the very next request is 401 although the authorizer had cached it', async () => {
    const issued = JSON.parse((await admin(base, 'create-credentials', 'org_demo')).stdout) as { api_access_id: string; api_secure_key: string };
    const url = `http://127.0.0.1:${base}/v3/organizations/org_demo/paymethods`;
    const headers = basic(issued.api_access_id, issued.api_secure_key);
    expect((await request(url, { headers })).status).toBe(200);
    expect((await request(url, { headers })).status).toBe(200); // from the authorizer cache

    const listed = JSON.parse((await admin(base, 'list-credentials', 'org_demo')).stdout) as Array<Record<string, string | null>>;
    expect(listed.find((item) => item.api_access_id === issued.api_access_id)).toMatchObject({ organization_id: 'org_demo', last_used_at: expect.any(String) });

    const revoked = await admin(base, 'revoke-credentials', issued.api_access_id);
    const returnedAt = performance.now();
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({ api_access_id: issued.api_access_id, revoked: true });
    const after = await request(url, { headers });
    console.info(`revoke-credentials took ${Math.round(revoked.ms)} ms; first request after it returned answered ${after.status} ${Math.round(performance.now() - returnedAt)} ms later`);
    expect(after.status).toBe(401);
    expect((await request(url, { headers: basic(demo.id, demo.key) })).status).toBe(200);

    const relisted = JSON.parse((await admin(base, 'list-credentials', 'org_demo')).stdout) as Array<{ api_access_id: string }>;
    expect(relisted.map((item) => item.api_access_id)).not.toContain(issued.api_access_id);
    const unknown = await admin(base, 'revoke-credentials', 'ak_nosuchcredential');
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.stderr)).toMatchObject({ error: 'NOT_FOUND' });
  });

  it('stops every child and removes every file on one SIGTERM to the whole process group', async () => {
    expect(runtime.descendants.length).toBeGreaterThanOrEqual(4);
    expect(existsSync(runtime.s3Folder)).toBe(true);
    process.kill(-(runtime.npm.pid as number), 'SIGTERM');
    expect(await leftovers(runtime)).toEqual({ processes: [], files: [] });
  });
});

describe('npm start stops cleanly whatever the signal', { timeout: 300_000 }, () => {
  it.each([
    { signal: 'SIGINT' as const, to: 'npm' as const, times: 2 },
    { signal: 'SIGHUP' as const, to: 'runtime' as const, times: 1 },
    { signal: 'SIGHUP' as const, to: 'group' as const, times: 2 },
  ])('$signal x$times to $to', async ({ signal, to, times }) => {
    const runtime = await startNpm({ PORT: '0' });
    expect(existsSync(runtimeFilePath(repoRoot, runtime.port))).toBe(true);
    expect(existsSync(eventsFilePath(repoRoot, runtime.port))).toBe(true);
    expect(existsSync(runtime.s3Folder)).toBe(true);
    const runtimePid = runtime.descendants.find((pid) => commandLine(pid).includes('local/start.ts')) as number;
    const target = to === 'npm' ? (runtime.npm.pid as number) : to === 'runtime' ? runtimePid : -(runtime.npm.pid as number);
    for (let index = 0; index < times; index += 1) {
      process.kill(target, signal);
      await sleep(50);
    }
    expect(await leftovers(runtime)).toEqual({ processes: [], files: [] });
  });
});
