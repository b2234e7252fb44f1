/**
 * Account Updater benchmark: `npm run --silent bench:account-updater` (BENCH_ROWS, default 100,000).
 *
 * 1. Starts the local runtime as a user does (`npm start`).
 * 2. Writes BENCH_ROWS/10 + BENCH_ROWS cards of one organization straight into
 *    its table with BatchWrite, in the repository's layout, each number
 *    sealed by the real vault.
 * 3. Interleaved, each in a child process so that its peak RSS is its own:
 *    the raw rate of single conditional UpdateItem calls on the same store
 *    (the same card update the apply step makes, as many in flight as the
 *    engine keeps), the apply of a BENCH_ROWS/10-row file, the raw rate
 *    again, the apply of the BENCH_ROWS-row file, the raw rate a third time.
 *    Applies go through the engine (au:apply's code: the state machine
 *    definition and handlers, 4 batches in flight locally).
 * 4. Re-applies the large file (every row skipped) and exports the month.
 * 5. Measures the write units of one applied row (DynamoDB Local's consumed
 *    capacity, per index) and of the former transaction per row, and prints
 *    the partition-key arithmetic for 1,000,000 rows in AWS.
 *
 * Numbers are local (DynamoDB Local on the JVM, s3rver, all on one machine).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { REPO_ROOT, startRuntimeForBench } from './support.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const SMALL = Math.max(1_000, Math.round(ROWS / 10));
const RAW_UPDATES = Math.min(SMALL, 10_000);
const ORG = 'org_bench_au';
const LOCATIONS = 100;
/** Conditional writes the local engine keeps in flight: 4 batches x 8 writes. */
const ENGINE_IN_FLIGHT = 32;
const FUNCTIONS_DIR = path.join(REPO_ROOT, 'functions');
const { values } = parseArgs({ options: { phase: { type: 'string' }, file: { type: 'string' }, month: { type: 'string' }, first: { type: 'string' }, count: { type: 'string' } } });

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

/** Child phases: run one step and print its time and this process's peak RSS. */
async function phase(): Promise<void> {
  const started = performance.now();
  let result: unknown;
  if (values.phase === 'apply') {
    const { applyLocalFile } = await import('../local/au-engine.ts');
    const { config } = await import('#shared/config.ts');
    const { summary } = await applyLocalFile(values.file!, { organizationId: ORG }, { bucket: config.reportsBucket, functionsDir: FUNCTIONS_DIR, concurrency: 4 });
    result = { applied: summary.applied, skipped: summary.skipped, errors: summary.error_count };
  } else if (values.phase === 'raw') {
    result = { updates: await rawUpdates(Number(values.first), Number(values.count)) };
  } else {
    const { exportAccountUpdates } = await import('#shared/domain/account-updater/export.ts');
    const { exportDeps } = await import('#shared/wiring/account-updater.ts');
    result = await exportAccountUpdates(values.month!, exportDeps());
  }
  const elapsedMs = performance.now() - started;
  process.stdout.write(JSON.stringify({ result, elapsedMs, peakRssMb: process.resourceUsage().maxRSS / 1024 }));
}

/**
 * The floor the apply step is measured against: one conditional UpdateItem
 * per card setting what an applied row sets (card, version, updated_at, the
 * sharded report keys, the source line), ENGINE_IN_FLIGHT at once, nothing else.
 */
async function rawUpdates(first: number, count: number): Promise<number> {
  const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
  const { dynamo } = await import('#shared/aws/dynamodb.ts');
  const { config } = await import('#shared/config.ts');
  const { keys } = await import('#shared/store/keys.ts');
  let next = first;
  const now = new Date().toISOString();
  const worker = async () => {
    for (let index = next++; index < first + count; index = next++) {
      const paymethodToken = token(index);
      await dynamo.send(
        new UpdateCommand({
          TableName: config.tableName,
          Key: keys.paymethod(paymethodToken),
          UpdateExpression: 'SET #card.au_code = :code, #card.au_updated_date = :now, updated_at = :now, #version = #version + :one, au_source = :source, gsi4pk = :g4pk, gsi4sk = :g4sk',
          ConditionExpression: 'attribute_exists(pk) AND paymethod_type = :card',
          ExpressionAttributeNames: { '#card': 'card', '#version': 'version' },
          ExpressionAttributeValues: {
            ':code': 'con',
            ':now': now,
            ':one': 1,
            ':card': 'card',
            ':source': { file_id: 'raw', line: index, run_id: 'raw' },
            ':g4pk': keys.paymethodAuByOrganization(ORG, now, paymethodToken).gsi4pk,
            ':g4sk': keys.paymethodAuByOrganization(ORG, now, paymethodToken).gsi4sk,
          },
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: ENGINE_IN_FLIGHT }, worker));
  return count;
}

async function child(args: string[], env: Record<string, string>): Promise<{ result: Record<string, number>; elapsedMs: number; peakRssMb: number }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env, LOG_LEVEL: 'WARN', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise((resolve) => proc.once('exit', resolve));
  if (code !== 0) throw new Error(`phase ${args.join(' ')} exited with ${String(code)}`);
  return JSON.parse(out) as { result: Record<string, number>; elapsedMs: number; peakRssMb: number };
}

const progress = (message: string) => process.stderr.write(`[bench] ${message}\n`);

/** Partition-key arithmetic for one organization's 1,000,000-row file in AWS (docs/account-updater.md). */
async function arithmetic() {
  const { AU_SHARDS } = await import('#shared/store/keys.ts');
  const { BATCH_ROWS, MAX_CONCURRENT_BATCHES } = await import('#shared/account-updater/state-machine.ts');
  const rows = 1_000_000;
  const writesInFlightPerBatch = 8;
  const conditionalWriteMs = 10;
  const rowsPerSecond = (MAX_CONCURRENT_BATCHES * writesInFlightPerBatch * 1000) / conditionalWriteMs;
  const perShard = rowsPerSecond / AU_SHARDS;
  // Binomial spread of rows over shards: mean + 4 standard deviations within one second.
  const worstShard = perShard + 4 * Math.sqrt(rowsPerSecond * (1 / AU_SHARDS) * (1 - 1 / AU_SHARDS));
  return {
    rows,
    design: { batchRows: BATCH_ROWS, batchesInFlight: MAX_CONCURRENT_BATCHES, writesInFlightPerBatch, conditionalWriteMs, rowsPerSecond },
    writesPerSecondPerKey: {
      card: '1 per card (its own partition)',
      historyShard: Math.round(worstShard),
      reportByOrganizationShard_gsi4: Math.round(worstShard),
      reportByLocationShard_gsi5_allInOneLocation: Math.round(worstShard),
      organizationList_gsi2_unsharded: rowsPerSecond,
      locationList_gsi1_unsharded_allInOneLocation: rowsPerSecond,
    },
    applySeconds: Math.round(rows / rowsPerSecond),
    underTenMinutes: rows / rowsPerSecond < 600,
  };
}

/** Write units of one applied row now (one UpdateItem + its history item) and of the former transaction per row. */
async function writeUnits(table: string) {
  const { PutCommand, TransactWriteCommand, UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
  const { dynamo } = await import('#shared/aws/dynamodb.ts');
  const { keys } = await import('#shared/store/keys.ts');
  const now = new Date().toISOString();
  const paymethodToken = token(ROWS + SMALL - 1);
  const update = {
    TableName: table,
    Key: keys.paymethod(paymethodToken),
    UpdateExpression: 'SET #card.au_code = :code, #card.au_updated_date = :now, updated_at = :now, #version = #version + :one, gsi4pk = :g4pk, gsi4sk = :g4sk, gsi5pk = :g5pk, gsi5sk = :g5sk',
    ExpressionAttributeNames: { '#card': 'card', '#version': 'version' },
    ExpressionAttributeValues: {
      ':code': 'cls',
      ':now': now,
      ':one': 1,
      ...Object.fromEntries(Object.entries({ ...keys.paymethodAuByOrganization(ORG, now, paymethodToken), ...keys.paymethodAuByLocation(ORG, 'loc_bench1', now, paymethodToken) }).map(([name, value]) => [`:${name.replace('gsi', 'g')}`, value])),
    },
  };
  const history = { ...keys.auHistory(ORG, now.slice(0, 7), now, paymethodToken, 999_999_999), entity: 'au-history', organization_id: ORG, location_id: 'loc_bench1', paymethod_token: paymethodToken, au_code: 'cls', au_description: 'Account closed', au_updated_date: now, last_4_account_number: '1111', expire_month: 12, expire_year: 2031 };
  const units = (consumed: Array<{ CapacityUnits?: number; Table?: { CapacityUnits?: number }; GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }> }> | undefined) => ({
    total: (consumed ?? []).reduce((sum, entry) => sum + (entry.CapacityUnits ?? 0), 0),
    table: (consumed ?? []).reduce((sum, entry) => sum + (entry.Table?.CapacityUnits ?? 0), 0),
    indexes: Object.fromEntries((consumed ?? []).flatMap((entry) => Object.entries(entry.GlobalSecondaryIndexes ?? {}).map(([name, value]) => [name, value.CapacityUnits ?? 0]))),
  });
  const now1 = await dynamo.send(new UpdateCommand({ ...update, ReturnConsumedCapacity: 'INDEXES' }));
  const now2 = await dynamo.send(new PutCommand({ TableName: table, Item: history, ReturnConsumedCapacity: 'INDEXES' }));
  const before = await dynamo.send(
    new TransactWriteCommand({
      TransactItems: [{ Update: { ...update, ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ':code': 'con' } } }, { Put: { TableName: table, Item: { ...history, sk: `${history.sk}x` } } }],
      ReturnConsumedCapacity: 'INDEXES',
    }),
  );
  return {
    now: { cardUpdate: units(now1.ConsumedCapacity ? [now1.ConsumedCapacity] : []), historyPut: units(now2.ConsumedCapacity ? [now2.ConsumedCapacity] : []) },
    formerTransactionPerRow: units(before.ConsumedCapacity),
  };
}

async function main(): Promise<void> {
  progress('starting the local runtime');
  const started = await startRuntimeForBench();
  const env = started.runtime.handlerEnvironment;
  Object.assign(process.env, env);
  const dir = await mkdtemp(path.join(tmpdir(), 'au-bench-'));
  try {
    const { BatchWriteCommand } = await import('@aws-sdk/lib-dynamodb');
    const { dynamo } = await import('#shared/aws/dynamodb.ts');
    const { paymethodItem } = await import('#shared/store/paymethods.ts');
    const { batchDeps } = await import('#shared/wiring/account-updater.ts');
    const { vault } = batchDeps();
    const table = env.TABLE_NAME!;

    // 1. Seed: indexes [0, SMALL) for the small file and the raw updates, [SMALL, SMALL + ROWS) for the large file.
    const total = SMALL + ROWS;
    progress(`runtime at ${started.url}; seeding ${total} cards`);
    const seedStarted = performance.now();
    let next = 0;
    const seedWorker = async () => {
      for (let first = next; first < total; first = next) {
        next += 25;
        const requests = [];
        for (let index = first; index < Math.min(first + 25, total); index += 1) {
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
          pending = (result.UnprocessedItems?.[table] ?? []) as typeof pending;
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, seedWorker));
    progress(`seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);

    // 2. The update files: new numbers, new expiries, closed, contact.
    const writeFileOf = async (name: string, from: number, count: number) => {
      const lines = ['paymethod_token,au_code,account_number,expire_month,expire_year'];
      for (let index = from; index < from + count; index += 1) {
        const kind = index % 4;
        lines.push(kind === 0 ? `${token(index)},new,${cardNumber(index, '5')},,` : kind === 1 ? `${token(index)},exp,,6,2033` : kind === 2 ? `${token(index)},cls,,,` : `${token(index)},con,,,`);
      }
      const file = path.join(dir, name);
      await writeFile(file, `${lines.join('\r\n')}\r\n`);
      return file;
    };
    const small = await writeFileOf('small.csv', 0, SMALL);
    const large = await writeFileOf('large.csv', SMALL, ROWS);

    // 3. Interleaved: raw, small apply, raw, large apply, raw.
    const raw = async () => {
      const run = await child(['--phase', 'raw', '--first', '0', '--count', String(RAW_UPDATES)], env);
      return (RAW_UPDATES / run.elapsedMs) * 1000;
    };
    const rawRates: number[] = [];
    rawRates.push(await raw());
    progress(`raw UpdateItem ${Math.round(rawRates[0]!)}/s; applying ${SMALL} rows`);
    const applySmall = await child(['--phase', 'apply', '--file', small], env);
    rawRates.push(await raw());
    progress(`applied ${SMALL} rows in ${(applySmall.elapsedMs / 1000).toFixed(1)} s; applying ${ROWS} rows`);
    const applyLarge = await child(['--phase', 'apply', '--file', large], env);
    rawRates.push(await raw());
    progress(`applied ${ROWS} rows in ${(applyLarge.elapsedMs / 1000).toFixed(1)} s; applying again`);
    const again = await child(['--phase', 'apply', '--file', large], env);
    progress('exporting');
    const exported = await child(['--phase', 'export', '--month', new Date().toISOString().slice(0, 7)], env);

    const applyRate = (ROWS / applyLarge.elapsedMs) * 1000;
    const rawRate = rawRates.reduce((sum, rate) => sum + rate, 0) / rawRates.length;
    const report = {
      rows: ROWS,
      apply: { ...applyLarge.result, seconds: +(applyLarge.elapsedMs / 1000).toFixed(1), rowsPerSecond: Math.round(applyRate), peakRssMb: Math.round(applyLarge.peakRssMb) },
      rawConditionalUpdateItem: { inFlight: ENGINE_IN_FLIGHT, perSecondEachRun: rawRates.map(Math.round), perSecondMean: Math.round(rawRate) },
      applyToRawRatio: +(applyRate / rawRate).toFixed(2),
      peakMemory: {
        [`${SMALL}Rows`]: Math.round(applySmall.peakRssMb),
        [`${ROWS}Rows`]: Math.round(applyLarge.peakRssMb),
        growthPercent: +(((applyLarge.peakRssMb - applySmall.peakRssMb) / applySmall.peakRssMb) * 100).toFixed(1),
      },
      smallApply: { ...applySmall.result, seconds: +(applySmall.elapsedMs / 1000).toFixed(1), rowsPerSecond: Math.round((SMALL / applySmall.elapsedMs) * 1000) },
      reapply: { ...again.result, seconds: +(again.elapsedMs / 1000).toFixed(1), rowsPerSecond: Math.round((ROWS / again.elapsedMs) * 1000), peakRssMb: Math.round(again.peakRssMb) },
      export: { files: (exported.result as unknown as { keys: string[] }).keys.length, seconds: +(exported.elapsedMs / 1000).toFixed(1), peakRssMb: Math.round(exported.peakRssMb) },
      writeUnitsPerRow: await writeUnits(table),
      awsArithmetic: await arithmetic(),
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
