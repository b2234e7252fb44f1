import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { authHeaders } from '../support/api.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

async function admin(...args: string[]) {
  try {
    const { stdout, stderr } = await run('npm', ['run', '--silent', 'admin', '--', ...args], {
      cwd: repoRoot,
      env: { ...process.env, PORT: String(inject('runtimePort')) },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

describe('admin CLI against the running local service', () => {
  it('registers a merchant under a partner and issues credentials that authenticate', async () => {
    const merchant = `org_cli${Date.now().toString(36)}`;
    const created = await admin('create-organization', merchant, '--parent', 'org_100');
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ organization_id: merchant, parent_organization_id: 'org_100' });

    const issued = await admin('create-credentials', merchant);
    expect(issued.code).toBe(0);
    const credential = JSON.parse(issued.stdout);
    expect(Object.keys(credential).sort()).toEqual(['api_access_id', 'api_secure_key', 'organization_id']);

    const identity = { organizationId: merchant, accessId: credential.api_access_id, secureKey: credential.api_secure_key };
    // Unknown route but authenticated: routing answers first, so probe auth on a known path instead.
    const probe = await fetch(`${inject('baseUrl')}/v3/organizations/${merchant}/paymethods`, { headers: authHeaders(identity) });
    expect(probe.status).not.toBe(401);
  });

  it('refuses duplicates, unknown parents and bad ids with a JSON error and a non-zero exit', async () => {
    expect((await admin('create-organization', 'org_100')).code).toBe(1);
    expect(JSON.parse((await admin('create-organization', 'org_100')).stderr)).toMatchObject({ error: 'ORGANIZATION_EXISTS' });
    expect(JSON.parse((await admin('create-organization', 'org_x1', '--parent', 'org_missing')).stderr)).toMatchObject({ error: 'NOT_FOUND' });
    expect(JSON.parse((await admin('create-credentials', 'nope')).stderr)).toMatchObject({ error: 'VALIDATION_ERROR' });
    expect((await admin('frobnicate', 'org_1')).code).toBe(2);
  });

  it('--help lists every command, its usage and the exit codes on stdout, exit 0; each command has its own', async () => {
    const help = await admin('--help');
    expect(help.code, help.stderr).toBe(0);
    const commands = ['create-organization', 'create-credentials', 'list-credentials', 'revoke-credentials', 'create-publishable-key', 'list-publishable-keys', 'revoke-publishable-key', 'set-paypal-credentials', 'index-status'];
    for (const command of commands) expect(help.stdout).toContain(`  admin ${command} `);
    expect(help.stdout).toMatch(/exit codes:\n {2}0 .*\n {2}1 .*\n {2}2 .*\n {2}3 /);
    for (const command of commands) {
      const own = await admin(command, '--help');
      expect(own.code, own.stderr).toBe(0);
      expect(own.stdout.startsWith(`admin ${command}: `), own.stdout).toBe(true);
      expect(own.stdout).toContain('exit codes:');
    }
    expect((await admin('help', 'revoke-credentials')).stdout).toBe((await admin('revoke-credentials', '-h')).stdout);
  });

  it('a usage error is one JSON line on a pipe and plain text on a terminal, exit 2 both ways; stdout stays empty', async () => {
    const piped = await admin('list-credentials', 'org_100', 'org_200');
    expect(piped.code).toBe(2);
    expect(piped.stdout).toBe('');
    expect(JSON.parse(piped.stderr)).toEqual({ error: 'USAGE', message: 'list-credentials takes 1 argument, not 2\nusage:\n  admin list-credentials org_<id> [--stack <name>]' });
    expect(JSON.parse((await admin('create-credentials', 'org_100', '--wait')).stderr).message).toMatch(/^--wait belongs to index-status\n/);
    // script(1) gives the command a terminal; its output is what a person sees.
    const terminal = await run('script', ['-qec', 'npm run --silent admin -- list-credentials org_100 org_200', '/dev/null'], { cwd: repoRoot, env: { ...process.env, PORT: String(inject('runtimePort')) } }).catch(
      (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
    );
    expect('code' in terminal ? terminal.code : 0).toBe(2);
    expect(terminal.stdout.replace(/\r\n/g, '\n')).toBe('error: list-credentials takes 1 argument, not 2\nusage:\n  admin list-credentials org_<id> [--stack <name>]\n');
  });

  it('reports the table\'s indexes, every one readable, and waits for nothing when all are', async () => {
    const { GLOBAL_SECONDARY_INDEXES } = await import('#shared/platform/table.ts');
    for (const args of [['index-status'], ['index-status', '--wait']]) {
      const answer = await admin(...args);
      expect(answer.code, answer.stderr).toBe(0);
      const status = JSON.parse(answer.stdout);
      expect(status.ready).toBe(true);
      expect(status.indexes.map((index: { index: string }) => index.index)).toEqual(GLOBAL_SECONDARY_INDEXES.map((index) => index.indexName));
      for (const index of status.indexes) expect(index).toMatchObject({ status: 'ACTIVE', backfilling: false });
    }
    expect((await admin('list-credentials', 'org_100', '--wait')).code).toBe(2);
  });
});
