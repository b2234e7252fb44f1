/**
 * Account Updater benchmark: `node --import tsx bench/account-updater.ts` (BENCH_ROWS, default 100,000).
 *
 * 1. Starts the local runtime as a user does (`npm start`).
 * 2. Writes BENCH_ROWS cards straight into its table with BatchWrite, in the
 *    repository's key layout, each number sealed by the real vault.
 * 3. Writes a matching update file (all four codes) and applies it with the
 *    apply use case, in a child process so that its peak RSS is its own;
 *    then applies it again (every row must be skipped).
 * 4. Exports the month's BENCH_ROWS updates (child process again).
 * 5. Reads one 50-record page of the organization's AU report and records
 *    the read capacity it consumed next to the table's size.
 *
 * Numbers are local (DynamoDB Local on the JVM, s3rver, all on one machine).
 */
import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { REPO_ROOT, startRuntimeForBench } from './support.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const ORG = 'org_bench_au';
const LOCATIONS = 100;
const { values } = parseArgs({ options: { phase: { type: 'string' }, file: { type: 'string' }, month: { type: 'string' } } });

const token = (index: number) => `mth_bench${String(index).padStart(17, '0')}`;
/** A 16-digit number passing Luhn, different for every index. */
function cardNumber(index: number, prefix = '4'): string {
  const body = `${prefix}${String(index).padStart(14, '0')}`;
  let sum = 0;
  for (let position = 0; position < body.length; position += 1) {
    let digit = Number(body[body.length - 1 - position]);
    if (position % 2 === 0) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return `${body}${(10 - (sum % 10)) % 10}`;
}

/** Child phases: run one use case and print its time and this process's peak RSS. */
async function phase(): Promise<void> {
  const started = performance.now();
  let result: unknown;
  if (values.phase === 'apply') {
    const { applyAccountUpdates } = await import('#shared/domain/account-updater/apply.ts');
    const { applyDeps } = await import('#shared/wiring/account-updater.ts');
    const summary = await applyAccountUpdates(() => createReadStream(values.file!, { highWaterMark: 64 * 1024 }), { organizationId: ORG }, { ...applyDeps(), concurrency: Number(process.env.BENCH_CONCURRENCY ?? 32) });
    result = { applied: summary.applied, skipped: summary.skipped, errors: summary.errors.length };
  } else {
    const { exportAccountUpdates } = await import('#shared/domain/account-updater/export.ts');
    const { exportDeps } = await import('#shared/wiring/account-updater.ts');
    result = await exportAccountUpdates(values.month!, exportDeps());
  }
  const elapsedMs = performance.now() - started;
  process.stdout.write(JSON.stringify({ result, elapsedMs, peakRssMb: process.resourceUsage().maxRSS / 1024 }));
}

async function child(args: string[], env: Record<string, string>): Promise<{ result: unknown; elapsedMs: number; peakRssMb: number }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env, LOG_LEVEL: 'WARN', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise((resolve) => proc.once('exit', resolve));
  if (code !== 0) throw new Error(`phase ${args.join(' ')} exited with ${String(code)}`);
  return JSON.parse(out) as { result: unknown; elapsedMs: number; peakRssMb: number };
}

const progress = (message: string) => process.stderr.write(`[bench] ${message}\n`);

async function main(): Promise<void> {
  progress('starting the local runtime');
  const started = await startRuntimeForBench();
  progress(`runtime at ${started.url}; seeding ${ROWS} cards`);
  const env = started.runtime.handlerEnvironment;
  Object.assign(process.env, env);
  const dir = await mkdtemp(path.join(tmpdir(), 'au-bench-'));
  try {
    const { BatchWriteCommand, QueryCommand } = await import('@aws-sdk/lib-dynamodb');
    const { dynamo } = await import('#shared/aws/dynamodb.ts');
    const { paymethodItem, DynamoPaymethodStore } = await import('#shared/store/paymethods.ts');
    const { applyDeps } = await import('#shared/wiring/account-updater.ts');
    const { vault } = applyDeps();
    const table = env.TABLE_NAME!;

    // 1. Seed.
    const seedStarted = performance.now();
    let next = 0;
    const seedWorker = async () => {
      for (let first = next; first < ROWS; first = next) {
        next += 25;
        const requests = [];
        for (let index = first; index < Math.min(first + 25, ROWS); index += 1) {
          const paymethodToken = token(index);
          const created = new Date(Date.UTC(2025, 0, 1) + index * 1000).toISOString();
          const record = {
            paymethod_token: paymethodToken,
            organization_id: ORG,
            location_id: `loc_bench${index % LOCATIONS}`,
            paymethod_type: 'card' as const,
            card: { card_type: 'visa' as const, name_on_card: 'Bench Card', last_4_account_number: cardNumber(index).slice(-4), masked_account_number: `****${cardNumber(index).slice(-4)}`, expire_month: 12, expire_year: 2031 },
            is_default: false,
            created_at: created,
            updated_at: created,
            version: 1,
          };
          requests.push({ PutRequest: { Item: paymethodItem(record, await vault.seal(cardNumber(index), { organizationId: ORG, recordToken: paymethodToken })) } });
        }
        let pending: typeof requests = requests;
        while (pending.length > 0) {
          const result = await dynamo.send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
          pending = (result.UnprocessedItems?.[table] ?? []) as typeof requests;
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, seedWorker));
    const seedMs = performance.now() - seedStarted;
    progress(`seeded in ${(seedMs / 1000).toFixed(1)} s; applying`);

    // 2. The update file: new numbers, new expiries, closed, contact.
    const file = path.join(dir, 'updates.csv');
    const lines = ['paymethod_token,au_code,account_number,expire_month,expire_year'];
    for (let index = 0; index < ROWS; index += 1) {
      const kind = index % 4;
      lines.push(kind === 0 ? `${token(index)},new,${cardNumber(index, '5')},,` : kind === 1 ? `${token(index)},exp,,6,2033` : kind === 2 ? `${token(index)},cls,,,` : `${token(index)},con,,,`);
    }
    await writeFile(file, `${lines.join('\r\n')}\r\n`);

    // 3. Apply, then apply again.
    const apply = await child(['--phase', 'apply', '--file', file], env);
    progress(`applied in ${(apply.elapsedMs / 1000).toFixed(1)} s; applying again`);
    const again = await child(['--phase', 'apply', '--file', file], env);
    // 4. Export the month the updates were applied in.
    const month = new Date().toISOString().slice(0, 7);
    progress('exporting');
    const exported = await child(['--phase', 'export', '--month', month], env);

    // 5. One report page and what it cost, next to the table's size.
    const { capacityRecordingClient } = await import('../test/support/consumed-capacity.ts');
    const { client: measuredClient, reads } = capacityRecordingClient();
    const store = new DynamoPaymethodStore(measuredClient, table);
    const today = new Date().toISOString().slice(0, 10);
    const page = await store.list({ organizationId: ORG, auUpdatedFrom: `${today}T00:00:00`, auUpdatedTo: `${today}T23:59:59` }, { pageSize: 50, pageIndex: 0 });
    const locationPage = await store.list({ organizationId: ORG, locationId: 'loc_bench7', auUpdatedFrom: `${today}T00:00:00`, auUpdatedTo: `${today}T23:59:59` }, { pageSize: 50, pageIndex: 0 });
    let tableItems = 0;
    for (const prefix of [`ORG#${ORG}#MTH`]) {
      let startKey: Record<string, unknown> | undefined;
      do {
        const result = await dynamo.send(new QueryCommand({ TableName: table, IndexName: 'gsi2', KeyConditionExpression: 'gsi2pk = :pk', ExpressionAttributeValues: { ':pk': prefix }, Select: 'COUNT', ExclusiveStartKey: startKey }));
        tableItems += result.Count ?? 0;
        startKey = result.LastEvaluatedKey;
      } while (startKey);
    }
    const rowsPerSecond = (ROWS / apply.elapsedMs) * 1000;
    const report = {
      rows: ROWS,
      seed: { seconds: +(seedMs / 1000).toFixed(1) },
      apply: { ...(apply.result as object), seconds: +(apply.elapsedMs / 1000).toFixed(1), rowsPerSecond: Math.round(rowsPerSecond), peakRssMb: Math.round(apply.peakRssMb) },
      reapply: { ...(again.result as object), seconds: +(again.elapsedMs / 1000).toFixed(1), rowsPerSecond: Math.round((ROWS / again.elapsedMs) * 1000), peakRssMb: Math.round(again.peakRssMb) },
      export: { files: (exported.result as { keys: string[] }).keys.length, seconds: +(exported.elapsedMs / 1000).toFixed(1), peakRssMb: Math.round(exported.peakRssMb) },
      reportPage: {
        organizationLevel: { results: page.items.length, readCapacityUnits: reads[0]?.consumedCapacity },
        locationLevel: { results: locationPage.items.length, readCapacityUnits: reads[1]?.consumedCapacity },
        paymethodsInTable: tableItems,
        auHistoryItems: ROWS,
      },
    };
    console.log(JSON.stringify(report, null, 2));
  } finally {
    await rm(dir, { recursive: true, force: true });
    // `npm start` does not always pass a signal on to the runtime it started: stop the runtime itself too.
    try {
      process.kill(started.runtime.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    await started.stop();
  }
}

if (values.phase) await phase();
else {
  await main();
  // Keep-alive sockets to the stopped runtime would hold the process open.
  process.exit(0);
}
