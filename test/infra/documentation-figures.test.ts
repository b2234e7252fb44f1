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
import { SECOND_FLUSH_AFTER_MS } from '../../scripts/authorizer-cache.ts';
import type { BenchRun } from '../../bench/results.ts';
import { DEFAULT_EXPORT_SCHEDULE, STATE_MACHINE_DATA_KEY_REUSE_SECONDS } from '#infra/account-updater.ts';
import { NODE_MAJOR } from '#infra/bundling.ts';
import { DEFAULT_WEB_ACL, UNRESERVED_CONCURRENCY_MINIMUM } from '#infra/environments.ts';
import { SECRET_MAC_VERSION } from '#shared/aws/credential-hasher.ts';
import { PAYPAL_TIMEOUT_MS } from '#shared/aws/paypal.ts';
import { PREFLIGHT_MAX_AGE_SECONDS } from '#shared/http/cors.ts';
import { MAX_CACHED_FINGERPRINT_KEYS } from '#shared/aws/kms-fingerprints.ts';
import { DATA_KEY_MAX_SEALS, DATA_KEY_REUSE_MS, IV_BYTES, MAX_CACHED_DATA_KEYS, SCHEME_VERSION } from '#shared/aws/kms-vault.ts';
import { MAX_ISSUES, MAX_JSON_DEPTH } from '#shared/http/hostile-input.ts';
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_RETENTION_MS } from '#shared/http/idempotency.ts';
import { BATCH_ROWS, MAX_CONCURRENT_BATCHES, TOLERATED_FAILURE_PERCENTAGE } from '#shared/account-updater/state-machine.ts';
import type { CallBudget } from '#shared/aws/client-config.ts';
import { DYNAMODB_BUDGET, EVENTBRIDGE_BUDGET, KMS_BUDGET, S3_BUDGET, SECRETS_MANAGER_BUDGET } from '#shared/aws/client-config.ts';
import { FAILED_AUTHENTICATION_LIMIT, FAILED_AUTHENTICATION_WINDOW_SECONDS } from '#shared/domain/authentication.ts';
import { WRITES_IN_FLIGHT, NEW_NUMBER_GROUP } from '#shared/domain/account-updater/apply.ts';
import { LISTED_ERRORS } from '#shared/domain/account-updater/merge.ts';
import { LAST_USED_RESOLUTION_MS } from '#shared/domain/credentials.ts';
import { MAX_FILE_BYTES } from '#shared/domain/documents/document.ts';
import { DOWNLOAD_URL_SECONDS } from '#shared/domain/documents/read-documents.ts';
import { UPLOAD_WINDOW_SECONDS } from '#shared/domain/documents/upload-session.ts';
import { ORGANIZATION_ID_PATTERN } from '#shared/domain/ids.ts';
import { FINGERPRINT_PATTERN } from '#shared/domain/paymethods/fingerprints.ts';
import { CARD_BRANDS } from '#shared/domain/paymethods/rules.ts';
import { DEFAULT_MINTS_PER_MINUTE, MAX_MINTS_PER_MINUTE } from '#shared/domain/publishable-keys.ts';
import { ACCOUNT_UPDATER_FUNCTION_SIZING, API_FUNCTION_SIZING, AUTHORIZER_BUDGET_MS } from '#shared/platform/function-sizing.ts';
import { AUTHORIZER_CACHE_TTL_SECONDS } from '#shared/platform/names.ts';
import { API_GATEWAY_MAX_HEADER_BYTES, routes } from '#shared/platform/routes.ts';
import { streamTriggers } from '#shared/platform/triggers.ts';
import { HISTORY_RETENTION_SECONDS } from '#shared/store/account-updater.ts';
import { ORGANIZATION_CACHE_MS } from '#shared/store/organizations.ts';
import { BOUNDARY_TTL_SECONDS } from '#shared/store/page-boundaries.ts';
import { LOCATION_CACHE_MS } from '#shared/store/publishable-keys.ts';
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
const seconds = (ms: number) => ms / 1000;

/**
 * Issuer prefix ranges as inclusive [low, high] pairs of one digit count,
 * neighbours merged, so "38 or 39" and 38-39 compare equal.
 */
function prefixRanges(ranges: ReadonlyArray<readonly [string, string]>): string[] {
  const merged: Array<[string, string]> = [];
  for (const [low, high] of ranges.toSorted(([a], [b]) => a.length - b.length || Number(a) - Number(b))) {
    const last = merged.at(-1);
    if (last && last[1].length === low.length && Number(last[1]) + 1 === Number(low)) last[1] = high;
    else merged.push([low, high]);
  }
  return merged.map(([low, high]) => `${low}-${high}`);
}

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

  it('are three: the main table, the Account Updater history table and the webhook deliveries table', () => {
    expect(Object.keys(resourcesOfType(template, 'AWS::DynamoDB::Table'))).toHaveLength(3);
    expect(flat(readme)).toContain('three DynamoDB tables (the main table, the Account Updater\'s history and the webhook deliveries)');
    expect(read('docs/data-model.md')).toContain('# Data model: the main table, the history table and the deliveries table');
  });

  it('keep reports and Account Updater history the 400 days docs/account-updater.md says', () => {
    const [bucketRules] = Object.values(resourcesOfType(template, 'AWS::S3::Bucket'))
      .map((bucket) => (bucket.Properties.LifecycleConfiguration as { Rules?: Array<{ Prefix?: string; ExpirationInDays?: number }> } | undefined)?.Rules ?? [])
      .filter((rules) => rules.some((rule) => rule.Prefix === 'au-reports/'));
    expect(bucketRules?.find((rule) => rule.Prefix === 'au-reports/')?.ExpirationInDays).toBe(400);
    expect(doc('account-updater')).toContain(`History and month items expire (TTL) after ${HISTORY_RETENTION_SECONDS / 86_400} days; reports are kept 400 days.`);
  });
});

describe('docs/data-model.md', () => {
  it('stamps last_used_at at the resolution the code uses', () => {
    const resolution = seconds(LAST_USED_RESOLUTION_MS);
    expect(doc('data-model')).toContain(`only when the stamp is over ${resolution} s old) | UpdateItem, condition \`last_used_at < :now-${resolution}s\``);
    expect(doc('api-decisions')).toContain(`\`last_used_at\` is written at most every ${resolution} s per credential`);
  });

  it("states how long a container keeps an organization (tenancy) and a location's keys (preflight)", () => {
    const model = doc('data-model');
    expect(model).toContain(`| Is organization A the parent of B (tenancy) | GetItem \`ORG#<B>\`/\`ORG\`, cached ${seconds(ORGANIZATION_CACHE_MS)} s per container |`);
    expect(model).toContain(`| CORS preflight: origins allowed at a location | Query gsi1 \`LOC#<org>#<loc>#PUBKEY\`, cached ${seconds(LOCATION_CACHE_MS)} s per container |`);
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

  it('states how many hostile-input problems an answer lists', () => {
    expect(decisions).toContain(`at most ${MAX_ISSUES} such problems are listed`);
  });

  it("states each card_type's issuer prefixes (and amex's length) as the code's brand table has them", () => {
    const sentence = decisions.split('must agree with the number\'s issuer prefix (')[1]!.split('), on create')[0]!;
    const documented = Object.fromEntries(
      sentence.split('; ').map((entry) => {
        const [, brand, prefixes] = /^`(\w+)` (.*)$/.exec(entry)!;
        const [list, length] = prefixes!.split(' with exactly ');
        const ranges = list!.split(/, | or /).map((prefix) => prefix.split('-') as [string, string?]).map(([low, high]) => [low, high ?? low] as const);
        return [brand, { ranges: prefixRanges(ranges), length: length ? Number.parseInt(length, 10) : undefined }];
      }),
    );
    expect(documented).toEqual(Object.fromEntries(Object.entries(CARD_BRANDS).map(([brand, { ranges, length }]) => [brand, { ranges: prefixRanges(ranges), length }])));
  });

  it('states the data key reuse that spares KMS calls on create', () => {
    expect(decisions).toContain(`one \`GenerateDataKey\` per organization per container every ${minutes(seconds(DATA_KEY_REUSE_MS))} minutes or ${number(DATA_KEY_MAX_SEALS)} seals`);
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

describe('docs/vault.md', () => {
  const vault = doc('vault');

  it("states the scheme's version, IV and data key reuse as kms-vault.ts has them", () => {
    const reuseMinutes = minutes(seconds(DATA_KEY_REUSE_MS));
    expect(vault).toContain(`## Scheme (version ${SCHEME_VERSION}): KMS envelope encryption`);
    expect(vault).toContain(`\`{"v":${SCHEME_VERSION},"purpose":"paymethod-vault",`);
    expect(vault).toContain(
      `for at most ${reuseMinutes} minutes and ${number(DATA_KEY_MAX_SEALS)} seals (\`maxKeyAgeMs\`, \`maxKeyUses\`), and at most ${MAX_CACHED_DATA_KEYS} keys per container`,
    );
    expect(vault).toContain(`(${number(DATA_KEY_MAX_SEALS)} random ${IV_BYTES * 8}-bit IVs per key`);
    expect(vault).toContain(`AES-256-GCM with a fresh random ${IV_BYTES}-byte IV`);
    expect(vault).toContain(`or the key aged out (${reuseMinutes} min / ${number(DATA_KEY_MAX_SEALS)} uses) | 1 \`GenerateDataKey\``);
  });

  it('states the fingerprint length, the derived keys a container keeps and how long a request hash is kept', () => {
    expect(FINGERPRINT_PATTERN.source).toContain('{43}');
    expect(vault).toContain('`fp_` followed by the base64url HMAC-SHA-256 (43 characters)');
    expect(vault).toContain(`at most ${number(MAX_CACHED_FINGERPRINT_KEYS)} organizations, never logged`);
    expect(vault).toContain(`(\`IDEM#\`, kept ${seconds(IDEMPOTENCY_RETENTION_MS) / 3600} h by TTL`);
  });
});

describe('docs/events.md', () => {
  it("states the publisher's memory and timeout", () => {
    const [publisher] = streamTriggers;
    expect(doc('events')).toContain(`| \`events-publish\` | Node ${NODE_MAJOR}, arm64, ${publisher!.sizing.memoryMb} MB, ${publisher!.sizing.timeoutSeconds} s;`);
  });
});

describe('docs/operations.md', () => {
  const operations = doc('operations');
  const raw = read('docs/operations.md');
  const template = synthesize(settings('prod'));
  const alarm = (name: string) => Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm')).find((resource) => resource.Properties.AlarmName === `PaymentsApi-prod-${name}`)!.Properties;

  /** The dev and prod cells of a row of the environments table, by its setting. */
  const environmentRow = (setting: string) => {
    const row = raw.split('\n').find((line) => line.startsWith(`| \`${setting}\` |`));
    if (!row) throw new Error(`docs/operations.md has no "${setting}" row`);
    return row.split('|').slice(2, 4).map((cell) => cell.trim());
  };

  it('states each environment setting the way cdk.json sets it', () => {
    interface Context {
      responseEnvironment: string;
      logRetentionDays: number;
      removalPolicy: string;
      deletionProtection: boolean;
      authorizerCacheTtlSeconds: number;
      throttling: { rateLimit: number; burstLimit: number };
      alarms: { enabled: boolean; serverErrorRatePercent: number; p99LatencyMs: number };
      accountConcurrencyLimit: number;
      webAcl?: false;
    }
    const { dev, prod } = (JSON.parse(read('cdk.json')) as { context: { environments: { dev: Context; prod: Context } } }).context.environments;
    const both = (cell: (environment: Context) => unknown) => [String(cell(dev)), String(cell(prod))];
    expect(environmentRow('responseEnvironment')).toEqual(both((environment) => `\`${environment.responseEnvironment}\``));
    expect(environmentRow('logRetentionDays')).toEqual(both((environment) => environment.logRetentionDays));
    expect(environmentRow('removalPolicy')).toEqual(both((environment) => `\`${environment.removalPolicy}\``));
    expect(environmentRow('deletionProtection')).toEqual(both((environment) => environment.deletionProtection));
    expect(environmentRow('authorizerCacheTtlSeconds')).toEqual(both((environment) => environment.authorizerCacheTtlSeconds));
    expect(environmentRow('throttling')).toEqual(both(({ throttling }) => `${throttling.rateLimit} rps / ${throttling.burstLimit} burst`));
    expect(environmentRow('alarms.enabled')).toEqual(both((environment) => environment.alarms.enabled));
    expect(environmentRow('alarms.serverErrorRatePercent')).toEqual(both((environment) => environment.alarms.serverErrorRatePercent));
    expect(environmentRow('alarms.p99LatencyMs')).toEqual(both((environment) => environment.alarms.p99LatencyMs));
    expect(environmentRow('accountConcurrencyLimit')).toEqual(both((environment) => environment.accountConcurrencyLimit));
    expect(read('docs/operations.md')).toContain(`leaves fewer than ${UNRESERVED_CONCURRENCY_MINIMUM} of \`accountConcurrencyLimit\` unreserved`);
    expect([dev.webAcl, prod.webAcl]).toEqual([false, undefined]);
    expect(settings('prod').webAcl).toEqual(DEFAULT_WEB_ACL);
    expect(environmentRow('webAcl')).toEqual(['`false`', `unset (on: ${DEFAULT_WEB_ACL.rateLimit} requests per address per ${DEFAULT_WEB_ACL.evaluationWindowSeconds} s)`]);
  });

  it("states the route functions' runtime, memory and timeout", () => {
    expect(operations).toContain(`domain event publisher: Node.js ${NODE_MAJOR}, arm64, ${API_FUNCTION_SIZING.memoryMb} MB, ${API_FUNCTION_SIZING.timeoutSeconds} s for routes and the authorizer`);
  });

  it("states each AWS client's timeouts and attempts", () => {
    const budget = ({ connectionTimeoutMs, socketTimeoutMs, requestTimeoutMs, maxAttempts }: CallBudget) =>
      `${seconds(connectionTimeoutMs)} s / ${seconds(socketTimeoutMs)} s / ${seconds(requestTimeoutMs)} s x${maxAttempts}`;
    expect(SECRETS_MANAGER_BUDGET).toEqual(KMS_BUDGET);
    expect(operations).toContain(
      `DynamoDB ${budget(DYNAMODB_BUDGET)}, KMS and Secrets Manager ${budget(KMS_BUDGET)}, S3 ${budget(S3_BUDGET)}, EventBridge ${budget(EVENTBRIDGE_BUDGET)};`,
    );
    const attempts = [DYNAMODB_BUDGET, KMS_BUDGET, S3_BUDGET, EVENTBRIDGE_BUDGET].map((each) => each.maxAttempts);
    expect(operations).toContain(`at most ${Math.min(...attempts)}-${Math.max(...attempts)} attempts`);
    expect(operations).toContain(`PayPal one ${seconds(PAYPAL_TIMEOUT_MS)} s attempt`);
  });

  it('states the authorizer cache, the last_used_at resolution and the second flush after a revocation', () => {
    const ttl = AUTHORIZER_CACHE_TTL_SECONDS;
    const resolution = seconds(LAST_USED_RESOLUTION_MS);
    expect(operations).toContain(`answering from cached decisions for up to ${ttl} s`);
    expect(operations).toContain(`the second time ${seconds(SECOND_FLUSH_AFTER_MS)} s after the first (the authorizer's ${seconds(AUTHORIZER_BUDGET_MS)} s budget and a margin)`);
    expect(operations).toContain(`one authorizer run per credential and address each ${ttl} s`);
    const writesAMinute = ['one', 'two', 'three', 'four'][60 / resolution - 1];
    expect(operations).toContain(`(once per ${ttl} s per credential and address), with a conditional write only when the stamp is over ${resolution} s old: at most ${writesAMinute} writes a minute`);
    expect(operations).toContain(`by up to the cache TTL plus ${resolution} s, a minute`);
    expect(ttl + resolution).toBeLessThanOrEqual(60);
    expect(operations).toContain(`\`authorizerCacheTtlSeconds\` is the same ${ttl}, and synth refuses more`);
    expect(operations).toContain(`until the cache entry expires (${ttl} s at most)`);
    expect(operations).toContain(`authorizer cache (${ttl} s, keyed on both auth headers and the address)`);
  });

  it('states the failed-authentication limit and window, and the secure-key hash version', () => {
    expect(operations).toContain(`capped two ways, each at ${FAILED_AUTHENTICATION_LIMIT} within ${FAILED_AUTHENTICATION_WINDOW_SECONDS} seconds`);
    expect(operations).toContain(`after ${FAILED_AUTHENTICATION_LIMIT} failures from one address`);
    expect(operations).toContain(`after ${FAILED_AUTHENTICATION_LIMIT} failures naming one access id`);
    expect(operations).toContain(`if the last ${FAILED_AUTHENTICATION_WINDOW_SECONDS} seconds already hold ${FAILED_AUTHENTICATION_LIMIT} failures`);
    expect(operations).toContain(`\`secret_mac_version\` (${SECRET_MAC_VERSION})`);
  });

  it("states the runbooks' alarm periods and thresholds as the template has them", () => {
    const errorRate = alarm('api-5xx-rate');
    expect([errorRate.DatapointsToAlarm, errorRate.EvaluationPeriods]).toEqual([2, 3]);
    expect(JSON.stringify(errorRate.Metrics)).toContain('IF(requests >= 20,');
    expect(operations).toContain('answered 5xx in 2 of 3 five-minute periods (only counted once a period has 20 requests)');

    const latency = alarm('api-p99-latency');
    expect(latency.DatapointsToAlarm).toBe(latency.EvaluationPeriods);
    expect(operations).toContain(`p99 latency above \`p99LatencyMs\` for ${minutes((latency.EvaluationPeriods as number) * (latency.Period as number))} minutes`);

    // The table stream's mapping (the webhook queues' mappings start at no position).
    const mapping = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')).find((candidate) => candidate.Properties.StartingPosition !== undefined);
    const { MaximumRetryAttempts, MaximumRecordAgeInSeconds } = mapping!.Properties as { MaximumRetryAttempts: number; MaximumRecordAgeInSeconds: number };
    expect(MaximumRetryAttempts).toBe(streamTriggers[0]!.retryAttempts);
    expect(operations).toContain(`still failed after ${MaximumRetryAttempts} retries (or was older than ${MaximumRecordAgeInSeconds / 3600} hours)`);

    const behind = alarm('events-publish-iterator-age');
    const [ageMetric] = behind.Metrics as Array<{ MetricStat: { Period: number } }>;
    expect([behind.DatapointsToAlarm, behind.EvaluationPeriods, ageMetric!.MetricStat.Period]).toEqual([2, 3, 300]);
    expect(operations).toContain(`the publisher is more than ${seconds(behind.Threshold as number)} s behind the table's stream (the age of the newest record it was handed, in two of three five-minute periods)`);
  });

  it("states the Account Updater's tolerated failures and how long inbox files are kept", () => {
    expect(operations).toContain(`fails within the map's tolerance (${TOLERATED_FAILURE_PERCENTAGE}% of the batches) does not count`);
    expect(operations).toContain(`${TOLERATED_FAILURE_PERCENTAGE}% of the batches failed after their retries`);
    const inbox = Object.values(resourcesOfType(template, 'AWS::S3::Bucket'))
      .flatMap((bucket) => (bucket.Properties.LifecycleConfiguration as { Rules?: Array<{ Prefix?: string; ExpirationInDays?: number }> } | undefined)?.Rules ?? [])
      .find((rule) => rule.Prefix === 'au-inbox/');
    expect(operations).toContain(`Inbox files expire after ${inbox?.ExpirationInDays} days`);
  });

  it("states how long a document's old versions and the Account Updater's history are kept", () => {
    const documents = Object.values(resourcesOfType(template, 'AWS::S3::Bucket'))
      .find((bucket) => (bucket.Properties.LoggingConfiguration as { LogFilePrefix?: string } | undefined)?.LogFilePrefix === 'documents-bucket/')!;
    const rules = (documents.Properties.LifecycleConfiguration as { Rules: Array<{ NoncurrentVersionExpiration?: { NoncurrentDays: number } }> }).Rules;
    const [days] = rules.flatMap((rule) => rule.NoncurrentVersionExpiration?.NoncurrentDays ?? []);
    expect(operations).toContain(`recovered from its previous version for ${days} days`);
    expect(operations).toContain(`until TTL (${HISTORY_RETENTION_SECONDS / 86_400} days) empties the old partitions`);
  });

  it('counts the routes where it prices per-route metrics and alarms', () => {
    expect(operations).toContain(`${routes.length} routes ≈`);
    expect(operations).toContain(`for ${routes.length} routes), the`);
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
