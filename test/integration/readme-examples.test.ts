import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseUrl } from '../support/api.ts';
import { npmScript } from '../support/cli.ts';
import type { RuntimeStores } from '../support/documents.ts';
import { runtimeStores } from '../support/documents.ts';
import { unique } from '../support/paymethods.ts';
import { ACCOUNT_SETTINGS_STACK_NAME } from '#infra/account-settings.ts';
import cdkJson from '../../cdk.json' with { type: 'json' };

const run = promisify(execFile);
const README = path.resolve(import.meta.dirname, '../../README.md');
const VARIABLES_MARK = '<!-- readme-example: variables -->';
const EXAMPLE_MARK = '<!-- readme-example -->';
/** What each curl of an example reports on stderr, beside what the reader sees. */
const STATUS_LINE = 'readme-example-status';

/** The ```sh block right after each line that is exactly `mark`. */
function blocksAfter(markdown: string, mark: string): string[] {
  const lines = markdown.split('\n');
  const blocks: string[] = [];
  lines.forEach((line, index) => {
    if (line !== mark) return;
    expect(lines[index + 1], `${mark} must be followed by a \`\`\`sh block`).toBe('```sh');
    const end = lines.indexOf('```', index + 2);
    expect(end, `unterminated block after ${mark}`).toBeGreaterThan(index);
    blocks.push(lines.slice(index + 2, end).join('\n'));
  });
  return blocks;
}

/** Every ```sh block, with the mark on the line before it ('' when none). */
function shellBlocks(markdown: string): Array<{ mark: string; block: string }> {
  const lines = markdown.split('\n');
  const blocks: Array<{ mark: string; block: string }> = [];
  lines.forEach((line, index) => {
    if (line !== '```sh') return;
    const end = lines.indexOf('```', index + 1);
    blocks.push({ mark: lines[index - 1] ?? '', block: lines.slice(index + 1, end).join('\n') });
  });
  return blocks;
}

/** Commands the unmarked blocks call that cannot run here (a deploy, a second runtime): each prints its arguments instead. */
const STAND_INS = ['npm', 'npx', 'aws', 'curl', 'tail', 'jq'];
const CALLED = 'readme-example-called';

/**
 * Runs `block` as written (errexit, nounset, pipefail) with only `variables`
 * set and the stand-ins above in place of those commands: a variable no block
 * defines fails it. Returns the stand-ins' calls, one argument list each.
 */
async function runWithStandIns(block: string, variables: Record<string, string>, cwd: string): Promise<string[][]> {
  const script = [...STAND_INS.map((name) => `${name}() { printf '${CALLED}\\t%s' ${name} >&2; printf '\\t%s' "$@" >&2; printf '\\n' >&2; }`), block].join('\n');
  const { stderr } = await run('bash', ['--norc', '--noprofile', '-euo', 'pipefail', '-c', script], { cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...variables } });
  return stderr
    .split('\n')
    .filter((line) => line.startsWith(`${CALLED}\t`))
    .map((line) => line.split('\t').slice(1));
}

/** The stacks `cdk deploy` can name: one API stack per environment in cdk.json, and the account-settings stack. */
const STACKS = [...Object.keys(cdkJson.context.environments).map((name) => `PaymentsApi-${name}`), ACCOUNT_SETTINGS_STACK_NAME];

/** The statuses a block documents, one `# -> NNN` comment per curl. */
const documentedStatuses = (block: string) => [...block.matchAll(/^# -> (\d{3})\b/gm)].map((match) => Number(match[1]));

// CI installs curl and jq (.ci/run) and must run the examples; a developer machine without them skips, loudly.
async function hasCommand(name: string): Promise<boolean> {
  return run('bash', ['-c', `command -v ${name}`]).then(
    () => true,
    () => false,
  );
}
const missingTools = process.env.CI === 'true' ? [] : (await Promise.all(['curl', 'jq'].map(async (name) => ((await hasCommand(name)) ? [] : [name])))).flat();
if (missingTools.length > 0) console.warn(`Skipping the README's curl examples: ${missingTools.join(' and ')} not installed.`);

describe.skipIf(missingTools.length > 0)("README's curl examples", () => {
  let markdown: string;
  let stores: RuntimeStores;
  let variables: Record<string, string>;
  let workDir: string;

  beforeAll(async () => {
    markdown = await readFile(README, 'utf8');
    stores = runtimeStores();
    // A fresh organization, as `npm start` gives a fresh demo one: its lists hold only what the examples create.
    const merchant = await stores.freshOrganization();
    const location = unique('loc_');
    const issued = await npmScript('admin', 'create-publishable-key', merchant.organizationId, location, '--origin', baseUrl());
    expect(issued.code, issued.stderr).toBe(0);
    variables = {
      BASE: baseUrl(),
      ORG: merchant.organizationId,
      AUTH: `${merchant.accessId}:${merchant.secureKey}`,
      PK: (JSON.parse(issued.stdout) as { publishable_key: string }).publishable_key,
      LOC: location,
    };
    workDir = await mkdtemp(path.join(tmpdir(), 'readme-examples-'));
  }, 120_000);

  afterAll(async () => {
    stores?.destroy();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('set exactly the variables the test provides (the runtime address, credentials, publishable key and location)', () => {
    const [block, ...others] = blocksAfter(markdown, VARIABLES_MARK);
    expect(others).toEqual([]);
    const assigned = [...(block ?? '').matchAll(/^([A-Z_]+)=/gm)].map((match) => match[1]);
    expect(assigned.sort()).toEqual(Object.keys(variables).sort());
  });

  it('are two blocks, each curl with its documented status', () => {
    const blocks = blocksAfter(markdown, EXAMPLE_MARK);
    expect(blocks).toHaveLength(2);
    for (const block of blocks) expect(documentedStatuses(block).length, block).toBe(block.match(/^curl /gm)?.length);
  });

  it('every other shell block runs as written, with the variables above, `npx`, `aws` and `npm` standing in', async () => {
    const others = shellBlocks(markdown).filter(({ mark }) => mark !== VARIABLES_MARK && mark !== EXAMPLE_MARK);
    expect(others.length).toBeGreaterThanOrEqual(4);
    const deploys: string[][] = [];
    // The file the admin block reads the PayPal client secret from, as the reader would have it.
    await writeFile(path.join(workDir, 'paypal-client-secret.txt'), 'not-a-secret');
    for (const { block } of others) {
      const calls = await runWithStandIns(block, variables, workDir).catch((error: { stderr: string }) => {
        throw new Error(`the block failed:\n${block}\n${error.stderr}`);
      });
      expect(calls.length, block).toBeGreaterThan(0);
      deploys.push(...calls.filter((call) => call[0] === 'npx' && call[1] === 'cdk' && call[2] === 'deploy'));
    }
    // cdk deploy refuses an app of several stacks without --all or a stack name.
    expect(deploys.length).toBeGreaterThan(0);
    for (const call of deploys) {
      const named = call.slice(3).filter((argument, index, all) => !argument.startsWith('-') && all[index - 1] !== '-c');
      expect(call.includes('--all') || (named.length > 0 && named.every((stack) => STACKS.includes(stack))), call.join(' ')).toBe(true);
    }
  });

  it('a block that uses a variable no block defines fails (the mistake of "$KEY" for "$AUTH")', async () => {
    await expect(runWithStandIns('curl -s -u "$KEY" "$BASE/v3/organizations/$ORG/paymethods"', variables, workDir)).rejects.toThrow(/KEY: unbound variable/);
    await expect(runWithStandIns('curl -s -u "$AUTH" "$BASE/v3/organizations/$ORG/paymethods"', variables, workDir)).resolves.toHaveLength(1);
  });

  it.each([0, 1])('block %i answers each documented status, in order', async (index) => {
    const block = blocksAfter(markdown, EXAMPLE_MARK)[index] as string;
    // Every curl also writes its status to stderr; the block itself runs as written, with errexit and pipefail
    // (--norc: bash reads the system bashrc when its stdin is a socket, as Node's pipes are).
    const script = [`curl() { command curl --write-out '%{stderr}${STATUS_LINE} %{http_code}\\n' "$@"; }`, block].join('\n');
    const environment = { PATH: process.env.PATH, HOME: process.env.HOME, ...variables };
    const { stdout, stderr } = await run('bash', ['--norc', '--noprofile', '-euo', 'pipefail', '-c', script], { cwd: workDir, env: environment }).catch(
      (error: { stdout: string; stderr: string }) => {
        throw new Error(`the block failed:\n${block}\nstdout:\n${error.stdout}\nstderr:\n${error.stderr}`);
      },
    );
    const statuses = [...stderr.matchAll(new RegExp(`^${STATUS_LINE} (\\d{3})$`, 'gm'))].map((match) => Number(match[1]));
    expect(statuses, `stdout:\n${stdout}\nstderr:\n${stderr}`).toEqual(documentedStatuses(block));
  });
});
