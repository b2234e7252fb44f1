import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseUrl } from '../support/api.ts';
import { npmScript } from '../support/cli.ts';
import type { RuntimeStores } from '../support/documents.ts';
import { runtimeStores } from '../support/documents.ts';
import { unique } from '../support/paymethods.ts';

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
