/**
 * The figures the README and the guides state about the code (tables, limits,
 * timeouts, cache lifetimes, counts), compared with the constants the code
 * runs with or with the synthesized template, so a change to one fails until
 * the docs say so. Measurements are not here: they are runs, kept under
 * bench/results/ (checked below for their header).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { recordRun } from '../../bench/results.ts';
import type { BenchRun } from '../../bench/results.ts';
import { DEFAULT_EXPORT_SCHEDULE, STATE_MACHINE_DATA_KEY_REUSE_SECONDS } from '#infra/account-updater.ts';
import { NODE_MAJOR } from '#infra/bundling.ts';
import { PREFLIGHT_MAX_AGE_SECONDS } from '#shared/http/cors.ts';
import { MAX_JSON_DEPTH } from '#shared/http/hostile-input.ts';
import { IDEMPOTENCY_LEASE_MS } from '#shared/http/idempotency.ts';
import { BATCH_ROWS, MAX_CONCURRENT_BATCHES, TOLERATED_FAILURE_PERCENTAGE } from '#shared/account-updater/state-machine.ts';
import { DYNAMODB_BUDGET, EVENTBRIDGE_BUDGET, KMS_BUDGET, S3_BUDGET } from '#shared/aws/client-config.ts';
import { WRITES_IN_FLIGHT, NEW_NUMBER_GROUP } from '#shared/domain/account-updater/apply.ts';
import { LISTED_ERRORS } from '#shared/domain/account-updater/merge.ts';
import { LAST_USED_RESOLUTION_MS } from '#shared/domain/credentials.ts';
import { MAX_FILE_BYTES } from '#shared/domain/documents/document.ts';
import { DOWNLOAD_URL_SECONDS } from '#shared/domain/documents/read-documents.ts';
import { UPLOAD_WINDOW_SECONDS } from '#shared/domain/documents/upload-session.ts';
import { ORGANIZATION_ID_PATTERN } from '#shared/domain/ids.ts';
import { FINGERPRINT_PATTERN } from '#shared/domain/paymethods/fingerprints.ts';
import { DEFAULT_MINTS_PER_MINUTE, MAX_MINTS_PER_MINUTE } from '#shared/domain/publishable-keys.ts';
import { ACCOUNT_UPDATER_FUNCTION_SIZING } from '#shared/platform/function-sizing.ts';
import { AUTHORIZER_CACHE_TTL_SECONDS } from '#shared/platform/names.ts';
import { API_GATEWAY_MAX_HEADER_BYTES, routes } from '#shared/platform/routes.ts';
import { streamTriggers } from '#shared/platform/triggers.ts';
import { BOUNDARY_TTL_SECONDS } from '#shared/store/page-boundaries.ts';
import { AU_SHARDS } from '#shared/store/keys.ts';
import { SCRIPT_MAX_AGE_SECONDS, VERSIONED_SCRIPT_MAX_AGE_SECONDS } from '#shared/tokenization/script.ts';
import { resourcesOfType, settings, synthesize } from './template-helpers.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
/** Line breaks in prose are not part of a figure. */
const flat = (text: string) => text.replace(/\s+/g, ' ');
const readme = read('README.md');
const doc = (name: string) => flat(read(`docs/${name}.md`));
const number = (value: number) => value.toLocaleString('en-US');
const minutes = (seconds: number) => seconds / 60;

describe('the README as a front door', () => {
  it('fits in about 300 lines and keeps the two commands a reader types first', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    expect(readme).toContain('\nnpm install && npm start ');
    expect(readme).toContain('\nnpm ci && npm test ');
  });

  it('names the Node.js major the functions run on', () => {
    expect(flat(readme)).toContain(`The project pins Node.js ${NODE_MAJOR}, the major Lambda runs`);
    expect(readme).toContain(`(one Lambda per route: Node ${NODE_MAJOR}, arm64`);
  });

  it('links every guide in docs/, so each has a reader', () => {
    const guides = readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.md'));
    for (const guide of guides) expect(readme, guide).toContain(`](docs/${guide}`);
  });

  it('keeps an "API decisions" section, where the contract says such decisions are, pointing at the document that holds them', () => {
    const section = readme.split('\n## API decisions\n')[1]?.split('\n## ')[0] ?? '';
    expect(section).toContain('](docs/api-decisions.md)');
  });
});

describe('commit hashes in the docs', () => {
  // A hook counts these tokens: runs and their commits belong in bench/results/, not in the guides.
  it('are at most 3 across the README and docs/*.md', () => {
    const files = ['README.md', ...readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
    const hashes = files.flatMap((file) => (read(file).match(/\b[0-9a-f]{7,40}\b/g) ?? []).filter((token) => /[a-f]/.test(token) && /[0-9]/.test(token)));
    expect(hashes.length, hashes.join(', ')).toBeLessThanOrEqual(3);
  });
});

describe("what `npm test` runs, as the README and docs/development.md list it", () => {
  const script = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.test!;
  // Each step of the script and how the docs name it.
  const named: Record<string, string> = {
    'npm run typecheck': '`tsc --noEmit`',
    'npm run lint': 'ESLint',
    'npm run lint:deps': '`npm run lint:deps`',
    'vitest run': 'vitest',
    'npm run synth': '`cdk synth`',
  };

  it.each([
    ['README.md', readme],
    ['docs/development.md', read('docs/development.md')],
  ])('%s names every step, in order', (_file, text) => {
    const steps = script.split('&&').map((step) => step.trim());
    expect(steps.map((step) => named[step] ?? `(no wording for "${step}")`)).toEqual(Object.values(named));
    const sentence = flat(text).split('`npm test` runs, in order: ')[1]!.split('. ')[0]!;
    const positions = steps.map((step) => sentence.indexOf(named[step]!));
    expect(positions.every((position) => position >= 0), sentence).toBe(true);
    expect(positions).toEqual(positions.toSorted((a, b) => a - b));
  });
});

describe('the tables, as the README and docs/data-model.md count them', () => {
  const template = synthesize(settings('dev'));

  it('are two: the main table and the Account Updater history table', () => {
    expect(Object.keys(resourcesOfType(template, 'AWS::DynamoDB::Table'))).toHaveLength(2);
    expect(flat(readme)).toContain('two DynamoDB tables (the main table, and the Account Updater\'s history table)');
    expect(read('docs/data-model.md')).toContain('# Data model: the main table and the history table');
  });

  it('keep reports and Account Updater history the 400 days docs/account-updater.md says', () => {
    const [bucketRules] = Object.values(resourcesOfType(template, 'AWS::S3::Bucket'))
      .map((bucket) => (bucket.Properties.LifecycleConfiguration as { Rules?: Array<{ Prefix?: string; ExpirationInDays?: number }> } | undefined)?.Rules ?? [])
      .filter((rules) => rules.some((rule) => rule.Prefix === 'au-reports/'));
    expect(bucketRules?.find((rule) => rule.Prefix === 'au-reports/')?.ExpirationInDays).toBe(400);
    expect(doc('account-updater')).toContain('History and month items expire (TTL) after 400 days; reports are kept 400 days.');
  });
});

describe('docs/data-model.md', () => {
  it('stamps last_used_at at the resolution the code uses', () => {
    const seconds = LAST_USED_RESOLUTION_MS / 1000;
    expect(doc('data-model')).toContain(`only when the stamp is over ${seconds} s old) | UpdateItem, condition \`last_used_at < :now-${seconds}s\``);
    expect(doc('api-decisions')).toContain(`\`last_used_at\` is written at most every ${seconds} s per credential`);
  });
});

describe('docs/api-decisions.md', () => {
  const decisions = doc('api-decisions');

  it('states the request limits the edge enforces', () => {
    expect(decisions).toContain(`JSON nested deeper than ${MAX_JSON_DEPTH} levels is 400`);
    expect(decisions).toContain(`over API Gateway's ${number(API_GATEWAY_MAX_HEADER_BYTES)}-byte limit are 413`);
    const mint = routes.find((route) => route.handler === 'onetimetokens-create')!;
    expect(decisions).toContain(`Bodies over ${mint.maxBodyBytes! / 1024} KB are 413 before parsing`);
  });

  it('states the attempts a dependency call makes at most', () => {
    const attempts = Math.max(...[DYNAMODB_BUDGET, S3_BUDGET, KMS_BUDGET, EVENTBRIDGE_BUDGET].map((budget) => budget.maxAttempts));
    expect(decisions).toContain(`connection and silence timeouts and at most ${attempts} attempts`);
  });

  it('states the idempotency lease and the bare page_index memory', () => {
    expect(decisions).toContain(`blocks it for at most its ${IDEMPOTENCY_LEASE_MS / 1000} s lease`);
    expect(decisions).toContain(`where each page started, for ${minutes(BOUNDARY_TTL_SECONDS)} minutes`);
  });

  it('states the identifier and fingerprint shapes', () => {
    expect(ORGANIZATION_ID_PATTERN.source).toContain('{1,60}');
    expect(decisions).toContain('`org_` followed by 1 to 60 letters, digits, `_` or `-`');
    expect(FINGERPRINT_PATTERN.source).toContain('{43}');
    expect(decisions).toContain('`fp_` and 43 characters');
  });

  it('states the document limits and lifetimes', () => {
    expect(decisions).toContain(`presigned S3 POST, up to ${number(MAX_FILE_BYTES)} bytes, valid ${minutes(UPLOAD_WINDOW_SECONDS)} minutes`);
    expect(decisions).toContain(`a 302 to a presigned URL valid ${minutes(DOWNLOAD_URL_SECONDS)} minutes`);
  });

  it("states the Account Updater summary's list length", () => {
    expect(decisions).toContain(`list the first ${number(LISTED_ERRORS)} in line order; past ${number(LISTED_ERRORS)} errors`);
    expect(decisions).toContain(`more than ${TOLERATED_FAILURE_PERCENTAGE}% of its batches failed`);
  });

  it('states the authorizer cache, the minting limits and the cache lifetimes of the preflight and the script', () => {
    expect(decisions).toContain(`each with its own decision cache (${AUTHORIZER_CACHE_TTL_SECONDS} s)`);
    expect(decisions).toContain(`may start ${DEFAULT_MINTS_PER_MINUTE} mints a minute (\`--mints-per-minute\`, 1 to ${MAX_MINTS_PER_MINUTE})`);
    expect(decisions).toContain(`browsers cache a success for ${minutes(PREFLIGHT_MAX_AGE_SECONDS)} minutes`);
    expect(decisions).toContain(`is cached for ${minutes(SCRIPT_MAX_AGE_SECONDS)} minutes at \`GET /v3/js/tokenize.js\``);
    expect(VERSIONED_SCRIPT_MAX_AGE_SECONDS).toBe(365 * 24 * 3600);
    expect(decisions).toContain('is cached for a year, `immutable`');
  });
});

describe('docs/account-updater.md', () => {
  const guide = doc('account-updater');

  it('states the map: batches in flight, tolerated failures, the workers and groups of a batch, the shards', () => {
    expect(guide).toContain(`${MAX_CONCURRENT_BATCHES} in flight, Retry per batch, ${TOLERATED_FAILURE_PERCENTAGE}% tolerated failures`);
    expect(guide).toContain(`**Batches of ${number(BATCH_ROWS)} rows** (fewer when they pass 1 MiB of the file), ${MAX_CONCURRENT_BATCHES} in flight in AWS`);
    expect(guide).toContain(`one pool of ${WRITES_IN_FLIGHT} workers`);
    expect(guide).toContain(`holds such rows back until it has ${NEW_NUMBER_GROUP} and commits them in one TransactWriteItems`);
    expect(guide).toContain(`The shard is FNV-1a of the token modulo ${AU_SHARDS}`);
  });

  it("states each function's timeout and memory, the export's schedule and the machine key's reuse", () => {
    for (const [name, sizing] of Object.entries(ACCOUNT_UPDATER_FUNCTION_SIZING)) {
      expect(guide).toContain(`\`${name}\` (${minutes(sizing.timeoutSeconds)} min, ${sizing.memoryMb / 1024} GB)`);
    }
    expect(guide).toContain(`EventBridge ${DEFAULT_EXPORT_SCHEDULE} ──▶ au-export`);
    expect(guide).toContain(`the schedule is \`${DEFAULT_EXPORT_SCHEDULE}\``);
    expect(guide).toContain(`rotating, data keys reused ${STATE_MACHINE_DATA_KEY_REUSE_SECONDS} s`);
  });
});

describe('docs/events.md', () => {
  it("states the publisher's memory and timeout", () => {
    const [publisher] = streamTriggers;
    expect(doc('events')).toContain(`| \`events-publish\` | Node ${NODE_MAJOR}, arm64, ${publisher!.sizing.memoryMb} MB, ${publisher!.sizing.timeoutSeconds} s;`);
  });
});

describe('benchmark runs under bench/results/', () => {
  const resultsDir = path.join(root, 'bench/results');
  const runFiles = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const file = path.join(dir, name);
      return statSync(file).isDirectory() ? runFiles(file) : name.endsWith('.json') ? [file] : [];
    });

  it('each carry the same header: command, commit, machine, figures', () => {
    const files = runFiles(resultsDir);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const run = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      expect(Object.keys(run).slice(0, 6), file).toEqual(['command', 'commit', 'dirty', 'date', 'machine', 'figures']);
      expect(run.command, file).toMatch(/npm run/);
      expect(run.commit, file).toMatch(/^[0-9a-f]{7,40}$/);
      expect(Object.keys(run.machine as object), file).toEqual(expect.arrayContaining(['cpus', 'memoryBytes', 'node']));
    }
  });

  it('are written by the shared writer with this checkout\'s commit and machine', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'bench-results-'));
    try {
      const file = recordRun('example', { ratio: 0.86 }, dir);
      expect(path.dirname(file)).toBe(path.join(dir, 'example'));
      const run = JSON.parse(readFileSync(file, 'utf8')) as BenchRun;
      expect(run.commit).toBe(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim());
      expect(run.machine.node).toBe(process.version);
      expect(run.machine.cpus).toBeGreaterThan(0);
      expect(run.figures).toEqual({ ratio: 0.86 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('quote their current figures in the guides by file', () => {
    for (const quoted of [...doc('account-updater').matchAll(/`(bench\/results\/[^`]+\.json)`/g), ...doc('events').matchAll(/`(bench\/results\/[^`]+\.json)`/g)]) {
      expect(() => statSync(path.join(root, quoted[1]!)), quoted[1]).not.toThrow();
    }
  });
});
