/**
 * Account Updater benchmark: `npm run --silent bench:account-updater` (BENCH_ROWS, default 100,000).
 *
 * 1. Starts the local runtime as a user does (`npm start`).
 * 2. Writes the cards of one organization straight into its table with
 *    BatchWrite, in the repository's layout, each as the API creates one:
 *    its number sealed by the real vault, its fingerprint, and its
 *    duplicate-scope entry. BENCH_ROWS/10 for the small file, BENCH_ROWS for
 *    each large file, WARM_FILE_ROWS that every apply process warms up on,
 *    and the floors' own.
 * 3. Interleaved, each in a child process so that its memory is its own and
 *    each once the runtime's event publisher has caught up, after rounds of
 *    both floors that warm DynamoDB Local up and are not counted (until both
 *    run within 5% of the round before):
 *    the two floors (below: the raw single conditional UpdateItem, and the
 *    store's write for the files' mix of rows), the apply of the
 *    BENCH_ROWS/10-row mixed file, the floors again, the apply of the
 *    BENCH_ROWS-row mixed file, the floors, the apply of a BENCH_ROWS-row
 *    file of new expiries only (every row exactly the raw floor's write: the
 *    like-for-like ratio), the floors a fourth time. Applies go through the
 *    engine (au:apply's code: the state machine definition and handlers, 4
 *    batches in flight locally). The mixed files' rows are, in turn, a new
 *    number, a new expiry, closed and contact cardholder. Every child runs
 *    with the V8 heap settings Lambda gives the Account Updater's functions,
 *    as `npm run au:apply` does.
 *    Each apply process is warm when its clock starts, as a chunk function's
 *    container is from its second batch on and the local runtime is from its
 *    second inbox file: it has applied a warm-up file of WARM_FILE_ROWS rows
 *    of the same mix on cards of their own (not counted), and the runtime's
 *    publisher has caught up with that file's events. Its peak RSS is the
 *    highest from there to the end of the counted apply (Linux's VmHWM, reset
 *    through /proc/self/clear_refs), so the two applies' peaks differ by what
 *    the file's size adds, not by how far a young process's allocators had
 *    grown when a short apply ended. Each floor's process likewise sends
 *    RAW_WARM_UPDATES writes on cards of their own first, not counted.
 * 4. Re-applies the large mixed file (every row skipped) and exports the month.
 * 5. Measures the write units of one applied row (DynamoDB Local's consumed
 *    capacity, per index): a new expiry on a card never updated and on one
 *    updated before, a new number, the files' mix; and of the former
 *    transaction per row. Prints
 *    the partition-key arithmetic for 1,000,000 rows in AWS, with this run's
 *    CPU per row on a chunk function's share of a vCPU.
 *
 * Numbers are local (DynamoDB Local on the JVM, s3rver, all on one machine).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { ACCOUNT_UPDATER_FUNCTION_SIZING } from '#shared/platform/function-sizing.ts';
import type { BatchDeps } from '#shared/domain/account-updater/apply.ts';
import type { CardChange } from '#shared/domain/account-updater/ports.ts';
import type { CardDetails } from '#shared/domain/paymethods/model.ts';
import type { SealedSecret } from '#shared/domain/vault.ts';
import { lambdaHeapFlags } from '../local/lambda-context.ts';
import { eventsFilePath } from '../local/runtime-file.ts';
import { recordRun } from './results.ts';
import { median, REPO_ROOT, startRuntimeForBench } from './support.ts';
import { withLuhnDigit } from '../test/support/card-numbers.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const SMALL = Math.max(1_000, Math.round(ROWS / 10));
// The small and the large apply are compared (and reported) by their row counts, which must differ.
if (!Number.isInteger(ROWS) || ROWS <= SMALL) throw new Error(`BENCH_ROWS must be a whole number above ${SMALL} (got ${process.env.BENCH_ROWS})`);
const RAW_UPDATES = Math.min(SMALL, 5_000);
/** Writes each floor's process sends first, not counted, on cards of their own: its client is as warm as an apply's. */
const RAW_WARM_UPDATES = Math.round(RAW_UPDATES / 2);
/**
 * Rows of the file every apply process applies before its clock starts: a
 * minute of applying or more, past the first minute of a process's life in
 * which V8's and glibc's high-water marks grow (docs/account-updater.md,
 * "Memory"); fewer for a small BENCH_ROWS.
 */
const WARM_FILE_ROWS = Math.min(30_000, ROWS);
/** Raw runs, interleaved with the applies; each updates cards of its own that no file touches. */
const RAW_RUNS = 4;
/**
 * Rounds of both floors first, not counted: DynamoDB Local's JVM compiles its
 * write paths over the first tens of thousands of calls, and a floor measured
 * before that is slow and flatters every ratio. One run was not enough: in
 * the runs that had one, the first counted raw floor ran 1 to 16% below the
 * mean of the other three. Rounds go on until both floors run within
 * WARM_UP_SETTLED of the round before (so at least two rounds), at most
 * WARM_UP_MAX_ROUNDS.
 */
const WARM_UP_MAX_ROUNDS = 6;
const WARM_UP_SETTLED = 0.05;
const ORG = 'org_bench_au';
const LOCATIONS = 100;
/** Conditional writes the local engine keeps in flight: 4 batches x 8 writes. */
const ENGINE_IN_FLIGHT = 32;
const CHUNK_MEMORY_MB = ACCOUNT_UPDATER_FUNCTION_SIZING['au-chunk'].memoryMb;
const FUNCTIONS_DIR = path.join(REPO_ROOT, 'functions');
const { values } = parseArgs({ options: { phase: { type: 'string' }, file: { type: 'string' }, 'warm-file': { type: 'string' }, 'warm-count': { type: 'string' }, month: { type: 'string' }, first: { type: 'string' }, count: { type: 'string' } } });

const token = (index: number) => `mth_bench${String(index).padStart(17, '0')}`;
const locationOf = (index: number) => `loc_bench${index % LOCATIONS}`;
const createdAt = (index: number) => new Date(Date.UTC(2025, 0, 1) + index * 1000).toISOString();
/**
 * The card as seeded (version 1), as the API creates one: with its number's
 * fingerprint (and, in the table, its duplicate-scope entry). The raw phase
 * updates it without reading it, as it knows it.
 */
function seededRecord(index: number, fingerprint: string) {
  const last4 = cardNumber(index).slice(-4);
  return {
    paymethod_token: token(index),
    organization_id: ORG,
    location_id: locationOf(index),
    paymethod_type: 'card' as const,
    card: { card_type: 'visa' as const, name_on_card: 'Bench Card', last_4_account_number: last4, masked_account_number: `****${last4}`, expire_month: 12, expire_year: 2031, fingerprint },
    is_default: false,
    created_at: createdAt(index),
    updated_at: createdAt(index),
    version: 1,
  };
}
/** The cards' new numbers: visa too, as a network refreshes a card within its brand; their last four always differ from the old. */
const NEW_NUMBER_PREFIX = '49';

/** A 16-digit number passing Luhn, different for every index (and prefix). */
function cardNumber(index: number, prefix = '4'): string {
  return withLuhnDigit(`${prefix}${String(index).padStart(15 - prefix.length, '0')}`);
}

/**
 * A new number for card `index` as a row of the file brings it: the card with
 * its new last four, fingerprint and code, and the number sealed for it.
 */
async function newNumberFor(
  { vault, fingerprinter }: Pick<BatchDeps, 'vault' | 'fingerprinter'>,
  index: number,
  card: CardDetails,
  appliedAt: string,
): Promise<{ card: CardDetails; secret: SealedSecret }> {
  const number = cardNumber(index, NEW_NUMBER_PREFIX);
  return {
    card: {
      ...card,
      last_4_account_number: number.slice(-4),
      masked_account_number: `****${number.slice(-4)}`,
      au_code: 'new',
      au_description: 'New account number',
      au_updated_date: appliedAt,
      fingerprint: await fingerprinter.fingerprint(ORG, { kind: 'card', accountNumber: number }),
    },
    secret: await vault.seal(number, { organizationId: ORG, recordToken: token(index) }),
  };
}

/** Child phases: run one step and print its time and this process's peak RSS. */
async function phase(): Promise<void> {
  // Modules load (and raw writes are prepared) before the clock starts: the phases compare steady rates, not start-up.
  if (values.phase === 'apply') await Promise.all([import('../local/au-engine.ts'), import('#shared/runtime/config.ts'), import('#functions/au-check.ts'), import('#functions/au-chunk.ts'), import('#functions/au-merge.ts')]);
  if (values.phase === 'apply' && values['warm-file']) await warmedUp(await applyFile(values['warm-file']), WARM_FILE_ROWS);
  let raw: (() => Promise<number>) | undefined;
  if (values.phase === 'raw' || values.phase === 'raw-mix') {
    // The floor's own warm-up: its first warm-count cards, then the counted ones.
    const [first, warm, mix] = [Number(values.first), Number(values['warm-count']), values.phase === 'raw-mix'];
    await warmedUp({ applied: await (await prepareRawWrites(first, warm, mix))() }, warm);
    raw = await prepareRawWrites(first + warm, Number(values.count), mix);
  }
  const liveHeap = values.phase === 'apply' ? await watchLiveHeap() : undefined;
  const peakRss = await peakRssFromHere();
  const rssAtStartMb = process.memoryUsage.rss() / 1024 / 1024;
  const started = performance.now();
  const rssTimeline = values.phase === 'apply' ? watchRss(started) : undefined;
  const cpuBefore = process.cpuUsage();
  let result: unknown;
  if (values.phase === 'apply') {
    result = await applyFile(values.file!);
  } else if (raw) {
    result = { updates: await raw() };
  } else {
    const { exportAccountUpdates } = await import('#shared/domain/account-updater/export.ts');
    const { exportDeps } = await import('#shared/wiring/account-updater-export.ts');
    result = await exportAccountUpdates(values.month!, exportDeps());
  }
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  process.stdout.write(
    JSON.stringify({
      result,
      elapsedMs,
      cpuMs: (cpu.user + cpu.system) / 1000,
      peakRssMb: peakRss.sincePhaseStarted(),
      peakRssScope: peakRss.scope,
      rssAtStartMb,
      processPeakRssMb: process.resourceUsage().maxRSS / 1024,
      liveHeap: liveHeap?.(),
      rssTimeline: rssTimeline?.(),
    }),
  );
}

async function applyFile(file: string): Promise<Record<string, number>> {
  const { applyLocalFile } = await import('../local/au-engine.ts');
  const { config } = await import('#shared/runtime/config.ts');
  const { summary } = await applyLocalFile(file, { organizationId: ORG }, { bucket: config.reportsBucket, functionsDir: FUNCTIONS_DIR, concurrency: 4 });
  return { applied: summary.applied as number, skipped: summary.skipped as number, errors: summary.error_count as number };
}

/**
 * After a phase's warm-up (an apply's warm-up file, a floor's first writes):
 * tells the parent and waits for its go. The parent first lets the runtime's
 * event publisher catch up with the warm-up's events, so the counted phase
 * does not pay for them.
 */
async function warmedUp(warmUp: { applied?: number }, expected: number): Promise<void> {
  if (warmUp.applied !== expected) throw new Error(`the warm-up applied ${warmUp.applied} of its ${expected} rows`);
  const go = new Promise((resolve) => process.once('message', resolve));
  process.send!('warmed');
  await go;
  process.disconnect();
}

/**
 * The process's peak RSS from now on. Linux keeps a high-water mark (VmHWM)
 * that writing 5 to /proc/self/clear_refs sets to the current RSS; where that
 * is not to be had, the peak of the process's whole life.
 */
async function peakRssFromHere(): Promise<{ scope: 'phase' | 'process'; sincePhaseStarted: () => number }> {
  try {
    await writeFile('/proc/self/clear_refs', '5');
    return { scope: 'phase', sincePhaseStarted: () => Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024 };
  } catch {
    return { scope: 'process', sincePhaseStarted: () => process.resourceUsage().maxRSS / 1024 };
  }
}

/** [ms since the clock started, RSS in MB], every half second. */
type RssTimeline = Array<[number, number]>;

/** The process's RSS through one apply, to compare two applies at the same elapsed time. */
function watchRss(started: number): () => RssTimeline {
  const samples: RssTimeline = [];
  const timer = setInterval(() => samples.push([performance.now() - started, process.memoryUsage.rss() / 1024 / 1024]), 500);
  timer.unref();
  return () => {
    clearInterval(timer);
    return samples;
  };
}

/** The highest RSS of a timeline within its first `ms`. */
const peakWithin = (timeline: RssTimeline | undefined, ms: number) => Math.round(Math.max(0, ...(timeline ?? []).filter(([at]) => at <= ms).map(([, mb]) => mb)));

/** The heap in use after V8's full collections during one apply (MB). */
interface LiveHeap {
  fullCollections: number;
  peak: number;
  /** Medians of the first and the last quarter of the collections: what the apply holds early and late in the run. */
  firstQuarterMedian: number;
  lastQuarterMedian: number;
}

/**
 * What the process holds, apart from how far V8 lets its heap grow: the heap
 * in use right after each full (mark-compact) collection V8 runs on its own.
 * Observed, never forced, so the run is not changed. The peak is the highest
 * of many samples, some taken with four batches in flight; anything held per
 * row would show as the last quarter's median above the first's.
 */
async function watchLiveHeap(): Promise<() => LiveHeap> {
  const { PerformanceObserver, constants } = await import('node:perf_hooks');
  const samples: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if ((entry as unknown as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) samples.push(process.memoryUsage().heapUsed / 1024 / 1024);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => {
    observer.disconnect();
    if (samples.length === 0) return { fullCollections: 0, peak: 0, firstQuarterMedian: 0, lastQuarterMedian: 0 };
    const quarter = Math.max(1, Math.floor(samples.length / 4));
    return { fullCollections: samples.length, peak: Math.max(0, ...samples), firstQuarterMedian: median(samples.slice(0, quarter)), lastQuarterMedian: median(samples.slice(-quarter)) };
  };
}

/**
 * The floors the apply step is measured against, ENGINE_IN_FLIGHT writes at
 * once on cards no file touches, with nothing else: no lookup, no history,
 * no engine; numbers are sealed and fingerprinted before the clock starts.
 *
 * - `raw` (the issue's floor): the store's own Account Updater write
 *   (`applyAccountUpdates`) for an expiry change, one conditional UpdateItem
 *   setting the card, version, updated_at, the sharded report keys and the
 *   source line.
 * - `raw-mix`: the same write for the files' mix of rows, where every fourth
 *   row brings a new number: that row's card gets its new sealed number and
 *   fingerprint, and joins its new duplicate-scope entry in the same commit (a
 *   transaction of the card and that entry,
 *   docs/data-model.md), NEW_NUMBER_GROUP such rows sharing
 *   one call, as the apply step writes them.
 */
async function prepareRawWrites(first: number, count: number, mix: boolean): Promise<() => Promise<number>> {
  const { dynamo } = await import('#shared/aws/dynamodb.ts');
  const { config } = await import('#shared/runtime/config.ts');
  const { DynamoCardUpdates } = await import('#shared/store/card-updates.ts');
  const { batchDeps } = await import('#shared/wiring/account-updater.ts');
  const { NEW_NUMBER_GROUP } = await import('#shared/domain/account-updater/apply.ts');
  const { vault, fingerprinter } = batchDeps();
  const store = new DynamoCardUpdates(dynamo, config.tableName);
  const now = new Date().toISOString();
  // Each entry is one call: an expiry change alone, or NEW_NUMBER_GROUP new numbers.
  const calls: CardChange[][] = [];
  const newNumbers: CardChange[] = [];
  for (let index = first; index < first + count; index += 1) {
    const current = seededRecord(index, await fingerprinter.fingerprint(ORG, { kind: 'card', accountNumber: cardNumber(index) }));
    const source = { file_id: 'raw', line: index + 2, run_id: 'raw', before: { card: current.card }, applied_lines: [index + 2] };
    if (mix && index % 4 === 0) {
      newNumbers.push({ current, ...(await newNumberFor({ vault, fingerprinter }, index, current.card, now)), source, updatedAt: now });
      if (newNumbers.length === NEW_NUMBER_GROUP) calls.push(newNumbers.splice(0));
    } else {
      calls.push([{ current, card: { ...current.card, expire_month: 6, expire_year: 2033, au_code: 'exp' as const, au_description: 'New expiration date', au_updated_date: now }, source, updatedAt: now }]);
    }
  }
  if (newNumbers.length > 0) calls.push(newNumbers);
  return async () => {
    let next = 0;
    let sent = 0;
    const worker = async () => {
      for (let index = next++; index < calls.length; index = next++) {
        // A call the client's budget gave up on (a loaded machine) is sent again. 'conflict' happens only when an
        // attempt that timed out had landed (the SDK's own retry then fails the version condition): the card is updated.
        for (let attempt = 1; ; attempt += 1) {
          try {
            await store.applyAccountUpdates(calls[index]!);
            sent += calls[index]!.length;
            break;
          } catch (error) {
            if (attempt >= 5) throw error;
          }
        }
      }
    };
    await Promise.all(Array.from({ length: ENGINE_IN_FLIGHT }, worker));
    return sent;
  };
}

interface PhaseOutcome {
  result: Record<string, number>;
  elapsedMs: number;
  /** This process's CPU time (user + system) during the phase. */
  cpuMs: number;
  /** The highest RSS from the phase's start to its end (`peakRssScope` 'phase'), or of the whole process where the system cannot tell ('process'). */
  peakRssMb: number;
  peakRssScope: 'phase' | 'process';
  rssAtStartMb: number;
  /** The highest RSS of the process's whole life, its warm-up included. */
  processPeakRssMb: number;
  /** Applies only (see watchLiveHeap). */
  liveHeap?: LiveHeap;
  /** Applies only (see watchRss). */
  rssTimeline?: RssTimeline;
}

/** Runs one phase in a child process; one with a warm-up (`--warm-file`, `--warm-count`) reports it through `onWarmed`, which says when to go on. */
async function child(args: string[], env: Record<string, string>, onWarmed?: () => Promise<void>): Promise<PhaseOutcome> {
  const proc = spawn(process.execPath, [...lambdaHeapFlags(CHUNK_MEMORY_MB), '--import', 'tsx', fileURLToPath(import.meta.url), ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env, LOG_LEVEL: 'WARN', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    stdio: onWarmed ? ['ignore', 'pipe', 'inherit', 'ipc'] : ['ignore', 'pipe', 'inherit'],
  });
  if (onWarmed) proc.once('message', () => void onWarmed().then(() => proc.send('go')));
  let out = '';
  proc.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise((resolve) => proc.once('exit', resolve));
  if (code !== 0) throw new Error(`phase ${args.join(' ')} exited with ${String(code)}`);
  return JSON.parse(out) as PhaseOutcome;
}

const progress = (message: string) => process.stderr.write(`[bench] ${message}\n`);

/**
 * Waits until the runtime's event publisher has caught up: its events file
 * has not grown for two seconds. Every write to the paymethod table is a
 * stream record the runtime reads and publishes from, on the same 2 cores as
 * DynamoDB Local; a backlog left by seeding (a Created event per card) or by
 * the phase before would slow whatever ran next. Returns the time waited.
 */
async function publisherCaughtUp(eventsFile: string): Promise<number> {
  const started = performance.now();
  const sizeOf = async () => (await stat(eventsFile).catch(() => undefined))?.size ?? 0;
  for (let size = await sizeOf(), quietSince = performance.now(); ; ) {
    await sleep(250);
    const now = await sizeOf();
    if (now !== size) [size, quietSince] = [now, performance.now()];
    else if (performance.now() - quietSince >= 2_000) return performance.now() - started;
  }
}

const roundedHeap = (heap: LiveHeap | undefined) => heap && { ...heap, peak: Math.round(heap.peak), firstQuarterMedian: Math.round(heap.firstQuarterMedian), lastQuarterMedian: Math.round(heap.lastQuarterMedian) };

/** Lambda gives a function one vCPU at 1,769 MB of memory, and a share in proportion below that. */
const LAMBDA_MB_PER_VCPU = 1_769;

/**
 * Partition-key arithmetic for one organization's 1,000,000-row file in AWS
 * (docs/account-updater.md). A batch is bound by its writes in flight (8 at
 * ~10 ms each) or by its function's CPU, whichever is lower: the apply's CPU
 * per row measured in this run, on the vCPU share a chunk function gets. The
 * run's time is taken at the lower bound; the keys are checked at the write
 * bound, the most the map can send however cheap a row turns out in AWS.
 */
async function arithmetic(cpuMsPerRow: number) {
  const { AU_SHARDS } = await import('#shared/store/keys.ts');
  const { BATCH_ROWS, MAX_CONCURRENT_BATCHES } = await import('#shared/account-updater/state-machine.ts');
  const { WRITES_IN_FLIGHT } = await import('#shared/domain/account-updater/apply.ts');
  const rows = 1_000_000;
  const conditionalWriteMs = 10;
  const chunkVcpu = CHUNK_MEMORY_MB / LAMBDA_MB_PER_VCPU;
  const writeBoundPerBatch = (WRITES_IN_FLIGHT * 1000) / conditionalWriteMs;
  const cpuBoundPerBatch = (chunkVcpu * 1000) / cpuMsPerRow;
  const rowsPerSecond = MAX_CONCURRENT_BATCHES * Math.min(writeBoundPerBatch, cpuBoundPerBatch);
  const ceilingRowsPerSecond = MAX_CONCURRENT_BATCHES * writeBoundPerBatch;
  const perShard = ceilingRowsPerSecond / AU_SHARDS;
  // Binomial spread of rows over shards: mean + 4 standard deviations within one second.
  const worstShard = perShard + 4 * Math.sqrt(ceilingRowsPerSecond * (1 / AU_SHARDS) * (1 - 1 / AU_SHARDS));
  return {
    rows,
    design: {
      batchRows: BATCH_ROWS,
      batchesInFlight: MAX_CONCURRENT_BATCHES,
      writesInFlightPerBatch: WRITES_IN_FLIGHT,
      conditionalWriteMs,
      chunkMemoryMb: CHUNK_MEMORY_MB,
      chunkVcpu: +chunkVcpu.toFixed(2),
      cpuMsPerRowMeasuredHere: +cpuMsPerRow.toFixed(2),
      rowsPerSecondPerBatch: { writeBound: Math.round(writeBoundPerBatch), cpuBound: Math.round(cpuBoundPerBatch) },
      rowsPerSecond: Math.round(rowsPerSecond),
      ceilingRowsPerSecond: Math.round(ceilingRowsPerSecond),
    },
    // At the ceiling: the most any key can receive.
    writesPerSecondPerKey: {
      card: '1 per card (its own partition)',
      historyShard: Math.round(worstShard),
      reportByOrganizationShard_gsi10: Math.round(worstShard),
      reportByLocationShard_gsi11_allInOneLocation: Math.round(worstShard),
      // The list indexes project only keys and immutable members (shared/platform/table.ts): an applied row writes none of their entries.
      organizationList_gsi9: 0,
      locationList_gsi8: 0,
    },
    applySeconds: Math.round(rows / rowsPerSecond),
    applySecondsAtCeiling: Math.round(rows / ceilingRowsPerSecond),
    underTenMinutes: rows / rowsPerSecond < 600,
  };
}

/**
 * Write units of one applied row, per index, as DynamoDB Local reports them:
 * now (the store's single conditional UpdateItem, on a card never updated
 * and on one updated before, whose report keys move, plus its history item
 * in the history table) and the former transaction per row (the same update
 * and a history put in the paymethod table, in one TransactWriteItems).
 */
async function writeUnits(table: string, historyTable: string, freshIndex: number, updatedIndex: number, newNumberIndex: number) {
  const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
  const { DynamoDBDocumentClient, PutCommand, TransactWriteCommand } = await import('@aws-sdk/lib-dynamodb');
  const { DynamoCardUpdates } = await import('#shared/store/card-updates.ts');
  const { keys } = await import('#shared/store/keys.ts');
  const { batchDeps } = await import('#shared/wiring/account-updater.ts');
  type Consumed = { CapacityUnits?: number; Table?: { CapacityUnits?: number }; GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }> };
  const units = (consumed: Consumed[]) => ({
    total: consumed.reduce((sum, entry) => sum + (entry.CapacityUnits ?? 0), 0),
    table: consumed.reduce((sum, entry) => sum + (entry.Table?.CapacityUnits ?? 0), 0),
    indexes: Object.fromEntries(consumed.flatMap((entry) => Object.entries(entry.GlobalSecondaryIndexes ?? {}).map(([name, value]) => [name, value.CapacityUnits ?? 0]))),
  });
  // A client of its own that asks for and records the consumed capacity of every write the store sends.
  const consumed: Consumed[] = [];
  const base = new DynamoDBClient({});
  base.middlewareStack.add(
    (next) => async (args) => {
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'INDEXES';
      const result = await next(args);
      consumed.push(...[(result.output as { ConsumedCapacity?: Consumed | Consumed[] }).ConsumedCapacity ?? []].flat());
      return result;
    },
    { step: 'initialize', name: 'recordConsumedCapacity' },
  );
  const client = DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } });
  const store = new DynamoCardUpdates(client, table);
  const now = new Date().toISOString();
  const historyOf = (paymethodToken: string) => ({ ...keys.auHistory(ORG, now.slice(0, 7), now, paymethodToken, 999_999_999), entity: 'au-history', organization_id: ORG, location_id: 'loc_bench1', paymethod_token: paymethodToken, au_code: 'cls', au_description: 'Account closed', au_updated_date: now, last_4_account_number: '1111', expire_month: 12, expire_year: 2031 });
  const applyOnce = async (index: number) => {
    const found = (await store.findCards([token(index)])).get(token(index))!;
    consumed.length = 0;
    const card = { ...found.paymethod.card!, au_code: 'cls' as const, au_description: 'Account closed', au_updated_date: now };
    const [outcome] = await store.applyAccountUpdates([{ current: found.paymethod, card, source: { file_id: 'units', line: 2, run_id: 'units', before: { card: found.paymethod.card! } }, updatedAt: now }]);
    if (outcome !== 'applied') throw new Error('the measured update did not apply');
    const update = units(consumed);
    consumed.length = 0;
    await client.send(new PutCommand({ TableName: historyTable, Item: historyOf(token(index)) }));
    return { cardUpdate: update, historyPut: units(consumed) };
  };
  const neverUpdated = await applyOnce(freshIndex);
  const updatedBefore = await applyOnce(updatedIndex);
  // A new number: the card (new sealed number and fingerprint, its gsi13 entry moved) and its new duplicate-scope
  // entry, in one transaction, which DynamoDB bills twice for each item it writes (the indexes once).
  const found = (await store.findCards([token(newNumberIndex)])).get(token(newNumberIndex))!;
  const renumbered = await newNumberFor(batchDeps(), newNumberIndex, found.paymethod.card!, now);
  consumed.length = 0;
  const [renumberedOutcome] = await store.applyAccountUpdates([
    { current: found.paymethod, ...renumbered, source: { file_id: 'units', line: 2, run_id: 'units', before: { card: found.paymethod.card!, ...(found.secret ? { secret: found.secret } : {}) } }, updatedAt: now },
  ]);
  if (renumberedOutcome !== 'applied') throw new Error('the measured new number did not apply');
  const newNumber = { cardUpdate: units(consumed), historyPut: neverUpdated.historyPut };
  const rowTotal = (row: { cardUpdate: { total: number }; historyPut: { total: number } }) => row.cardUpdate.total + row.historyPut.total;
  // The former pattern: the card's update and its history item in one transaction (DynamoDB bills each item twice).
  const later = new Date(Date.now() + 1000).toISOString();
  consumed.length = 0;
  await client.send(
    new TransactWriteCommand({
      TransactItems: [
        {
          Update: {
            TableName: table,
            Key: keys.paymethod(token(updatedIndex)),
            UpdateExpression: 'SET #card.au_code = :code, #card.au_updated_date = :now, updated_at = :now, #version = #version + :one, gsi4pk = :g4pk, gsi4sk = :g4sk, gsi5pk = :g5pk, gsi5sk = :g5sk',
            ExpressionAttributeNames: { '#card': 'card', '#version': 'version' },
            ExpressionAttributeValues: {
              ':code': 'con',
              ':now': later,
              ':one': 1,
              ...Object.fromEntries(Object.entries({ ...keys.paymethodAuByOrganization(ORG, later, token(updatedIndex)), ...keys.paymethodAuByLocation(ORG, locationOf(updatedIndex), later, token(updatedIndex)) }).map(([name, value]) => [`:${name.replace('gsi', 'g')}`, value])),
            },
          },
        },
        { Put: { TableName: table, Item: { ...historyOf(token(updatedIndex)), sk: `${historyOf(token(updatedIndex)).sk}x` } } },
      ],
    }),
  );
  return {
    now: { neverUpdatedCard: neverUpdated, cardUpdatedBefore: updatedBefore, newNumberNeverUpdatedCard: newNumber },
    // The files' mix (one row in four a new number) on cards never updated: the mean of a row, history included.
    filesMixPerRowNeverUpdated: (3 * rowTotal(neverUpdated) + rowTotal(newNumber)) / 4,
    formerTransactionPerRow_cardUpdatedBefore: units(consumed),
  };
}

async function main(): Promise<void> {
  progress('starting the local runtime');
  const started = await startRuntimeForBench();
  const env = started.runtime.handlerEnvironment;
  Object.assign(process.env, env);
  const dir = await mkdtemp(path.join(tmpdir(), 'au-bench-'));
  try {
    const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
    const { BatchWriteCommand, DynamoDBDocumentClient } = await import('@aws-sdk/lib-dynamodb');
    // Seeding is set-up, not measured: a client of its own with patient timeouts, so a loaded machine slows it down
    // instead of failing it (the service's clients give up after 2 s of silence).
    const dynamo = DynamoDBDocumentClient.from(new DynamoDBClient({ maxAttempts: 10, requestHandler: { connectionTimeout: 10_000, socketTimeout: 60_000 } }));
    const { duplicateScopeItem } = await import('#shared/store/duplicate-scopes.ts');
    const { paymethodItem } = await import('#shared/store/paymethod-item.ts');
    const { batchDeps } = await import('#shared/wiring/account-updater.ts');
    const { vault, fingerprinter } = batchDeps();
    const table = env.TABLE_NAME!;

    // 1. Seed: [0, SMALL) for the small file, [SMALL, SMALL + ROWS) for the large mixed file, ROWS more for the
    // expiry-only file, WARM_FILE_ROWS for the warm-up files, then the floor runs' ranges (RAW_WARM_UPDATES to warm
    // up on, RAW_UPDATES counted) and two cards for the write units.
    const expiryFirst = SMALL + ROWS;
    const warmFirst = expiryFirst + ROWS;
    const rawFirst = warmFirst + WARM_FILE_ROWS;
    // Each measured slot runs both floors, each on cards of its own.
    const unitsFirst = rawFirst + 2 * (WARM_UP_MAX_ROUNDS + RAW_RUNS) * (RAW_WARM_UPDATES + RAW_UPDATES);
    const total = unitsFirst + 2;
    progress(`runtime at ${started.url}; seeding ${total} cards`);
    const seedStarted = performance.now();
    let next = 0;
    const seedWorker = async () => {
      for (let first = next; first < total; first = next) {
        next += 12;
        const requests = [];
        // 12 cards and their duplicate-scope entries to a BatchWriteItem (its limit is 25 items).
        for (let index = first; index < Math.min(first + 12, total); index += 1) {
          const fingerprint = await fingerprinter.fingerprint(ORG, { kind: 'card', accountNumber: cardNumber(index) });
          const record = seededRecord(index, fingerprint);
          requests.push({ PutRequest: { Item: paymethodItem(record, await vault.seal(cardNumber(index), { organizationId: ORG, recordToken: record.paymethod_token })) } });
          requests.push({ PutRequest: { Item: duplicateScopeItem(record)! } });
        }
        let pending: typeof requests = requests;
        while (pending.length > 0) {
          const result = await dynamo.send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
          pending = (result.UnprocessedItems?.[table] ?? []) as typeof pending;
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, seedWorker));
    progress(`seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);
    const eventsFile = eventsFilePath(REPO_ROOT, Number(new URL(started.url).port));
    const afterSeeding = await publisherCaughtUp(eventsFile);
    progress(`the runtime's event publisher caught up ${(afterSeeding / 1000).toFixed(1)} s after seeding (2 s of it without a new event)`);
    // Every phase starts with the publisher caught up with the one before, so none pays for another's events.
    const publisherWaits: number[] = [];
    const caughtUp = async () => void publisherWaits.push(await publisherCaughtUp(eventsFile));
    const measured = async (args: string[]) => {
      await caughtUp();
      return child(args, env, args.some((arg) => arg.startsWith('--warm-')) ? caughtUp : undefined);
    };

    // 2. The update files: new numbers, new expiries, closed, contact.
    /** A row of the files' mix: its kind by `kind` (0 to 3), a new number with `prefix`, a new expiry `month`/`year`. */
    const mixedRow = (index: number, kind: number, prefix: string, month: number, year: number) =>
      kind === 0 ? `${token(index)},new,${cardNumber(index, prefix)},,` : kind === 1 ? `${token(index)},exp,,${month},${year}` : kind === 2 ? `${token(index)},cls,,,` : `${token(index)},con,,,`;
    const writeFileOf = async (name: string, from: number, count: number, rowOf: (index: number) => string) => {
      const lines = ['paymethod_token,au_code,account_number,expire_month,expire_year'];
      for (let index = from; index < from + count; index += 1) lines.push(rowOf(index));
      const file = path.join(dir, name);
      await writeFile(file, `${lines.join('\r\n')}\r\n`);
      return file;
    };
    const filesMix = (index: number) => mixedRow(index, index % 4, NEW_NUMBER_PREFIX, 6, 2033);
    const small = await writeFileOf('small.csv', 0, SMALL, filesMix);
    const large = await writeFileOf('large.csv', SMALL, ROWS, filesMix);
    // Only new expiries: every row is exactly the raw floor's single UpdateItem.
    const expiryOnly = await writeFileOf('expiry.csv', expiryFirst, ROWS, (index) => `${token(index)},exp,,${1 + (index % 12)},2034`);
    /**
     * The warm-up file of the `round`-th apply process: the files' mix on the warm-up cards, each row's kind
     * turned by the round, so that every row changes its card again (another code, expiry or number).
     */
    let warmRound = 0;
    const warmFile = async () => {
      const round = (warmRound += 1);
      return writeFileOf(`warm-${round}.csv`, warmFirst, WARM_FILE_ROWS, (index) => mixedRow(index, (index + round) % 4, `4${round}`, round, 2036));
    };
    const warmApply = async (file: string) => measured(['--phase', 'apply', '--warm-file', await warmFile(), '--file', file]);

    // 3. Interleaved (after an uncounted warm-up): floors, small apply, floors, large apply, floors, expiry-only apply, floors.
    let rawRange = 0;
    const rawRun = async (kind: 'raw' | 'raw-mix') => {
      const first = rawFirst + rawRange * (RAW_WARM_UPDATES + RAW_UPDATES);
      rawRange += 1;
      const run = await measured(['--phase', kind, '--first', String(first), '--warm-count', String(RAW_WARM_UPDATES), '--count', String(RAW_UPDATES)]);
      return { perSecond: (RAW_UPDATES / run.elapsedMs) * 1000, cpuMsPerWrite: run.cpuMs / RAW_UPDATES };
    };
    const floors = { raw: [] as Array<{ perSecond: number; cpuMsPerWrite: number }>, mix: [] as Array<{ perSecond: number; cpuMsPerWrite: number }> };
    const measureFloors = async () => {
      floors.raw.push(await rawRun('raw'));
      floors.mix.push(await rawRun('raw-mix'));
      progress(`raw UpdateItem ${Math.round(floors.raw.at(-1)!.perSecond)}/s, store write for the files' mix ${Math.round(floors.mix.at(-1)!.perSecond)}/s`);
    };
    const warmUp = { raw: [] as number[], mix: [] as number[] };
    const settled = (rates: number[]) => rates.length >= 2 && Math.abs(rates.at(-1)! - rates.at(-2)!) <= WARM_UP_SETTLED * rates.at(-2)!;
    // settled() needs two rounds to compare, so there are always at least two.
    while (warmUp.raw.length < WARM_UP_MAX_ROUNDS && !(settled(warmUp.raw) && settled(warmUp.mix))) {
      warmUp.raw.push((await rawRun('raw')).perSecond);
      warmUp.mix.push((await rawRun('raw-mix')).perSecond);
      progress(`warm-up (not counted): raw UpdateItem ${Math.round(warmUp.raw.at(-1)!)}/s, store write for the files' mix ${Math.round(warmUp.mix.at(-1)!)}/s`);
    }
    await measureFloors();
    progress(`applying ${SMALL} rows (after a warm-up file of ${WARM_FILE_ROWS})`);
    const applySmall = await warmApply(small);
    await measureFloors();
    progress(`applied ${SMALL} rows in ${(applySmall.elapsedMs / 1000).toFixed(1)} s; applying ${ROWS} rows`);
    const applyLarge = await warmApply(large);
    await measureFloors();
    progress(`applied ${ROWS} rows in ${(applyLarge.elapsedMs / 1000).toFixed(1)} s; applying ${ROWS} expiry-only rows`);
    const applyExpiry = await warmApply(expiryOnly);
    await measureFloors();
    const mean = (runs: Array<{ perSecond: number }>) => runs.reduce((sum, run) => sum + run.perSecond, 0) / runs.length;
    const rateOf = (run: PhaseOutcome, rows: number) => (rows / run.elapsedMs) * 1000;
    const applyRate = rateOf(applyExpiry, ROWS);
    const mixedRate = rateOf(applyLarge, ROWS);
    const rawRate = mean(floors.raw);
    const mixRate = mean(floors.mix);
    progress(
      `expiry-only apply ${Math.round(applyRate)} rows/s, mixed ${Math.round(mixedRate)} rows/s; raw ${floors.raw.map((run) => Math.round(run.perSecond)).join('/')} per s, ratios ${(applyRate / rawRate).toFixed(2)} and ${(mixedRate / rawRate).toFixed(2)}; same-mix ${floors.mix.map((run) => Math.round(run.perSecond)).join('/')} per s, mixed ratio ${(mixedRate / mixRate).toFixed(2)}; peak RSS ${Math.round(applySmall.peakRssMb)} / ${Math.round(applyLarge.peakRssMb)} MB, live heap (peak) ${Math.round(applySmall.liveHeap?.peak ?? 0)} / ${Math.round(applyLarge.liveHeap?.peak ?? 0)} MB`,
    );
    const writeUnitsPerRow = await writeUnits(table, env.AU_HISTORY_TABLE_NAME!, unitsFirst, SMALL, unitsFirst + 1);
    progress(`write units per row: ${JSON.stringify(writeUnitsPerRow)}`);
    // BENCH_REAPPLY=0 leaves out the re-apply and the export (a shared machine's time budget).
    const withReapply = process.env.BENCH_REAPPLY !== '0';
    if (withReapply) progress('applying again');
    const again = withReapply ? await child(['--phase', 'apply', '--file', large], env) : undefined;
    if (withReapply) progress('exporting');
    const exported = withReapply ? await child(['--phase', 'export', '--month', new Date().toISOString().slice(0, 7)], env) : undefined;

    const applyFigures = (run: PhaseOutcome, rows: number) => ({ rows, ...run.result, seconds: +(run.elapsedMs / 1000).toFixed(1), rowsPerSecond: Math.round(rateOf(run, rows)) });
    const report = {
      rows: ROWS,
      // The ratio, like for like: a file whose every row is exactly the raw floor's write.
      apply: { file: 'new expiries only', ...applyFigures(applyExpiry, ROWS) },
      rawConditionalUpdateItem: { inFlight: ENGINE_IN_FLIGHT, perSecondEachRun: floors.raw.map((run) => Math.round(run.perSecond)), perSecondMean: Math.round(rawRate) },
      applyToRawRatio: +(applyRate / rawRate).toFixed(2),
      // The files' mix (every fourth row a new number: a transaction of the card and its new duplicate-scope entry),
      // against the raw floor and against the store's own write for the same rows.
      mixedApply: { ...applyFigures(applyLarge, ROWS), toRawRatio: +(mixedRate / rawRate).toFixed(2), toSameMixRatio: +(mixedRate / mixRate).toFixed(2) },
      rawStoreWriteSameMix: { inFlight: ENGINE_IN_FLIGHT, perSecondEachRun: floors.mix.map((run) => Math.round(run.perSecond)), perSecondMean: Math.round(mixRate), toRawRatio: +(mixRate / rawRate).toFixed(2) },
      // Waits for the runtime's event publisher to catch up (each includes the 2 s without a new event that ends it):
      // after seeding, and the longest before a phase or after a phase's warm-up.
      publisherCaughtUpSeconds: { afterSeeding: +(afterSeeding / 1000).toFixed(1), longestBeforeAPhase: +(Math.max(...publisherWaits) / 1000).toFixed(1) },
      // Not counted: the rounds that warmed DynamoDB Local up, until both floors settled (or WARM_UP_MAX_ROUNDS).
      warmUp: { rounds: warmUp.raw.length, settled: settled(warmUp.raw) && settled(warmUp.mix), rawPerSecond: warmUp.raw.map(Math.round), sameMixPerSecond: warmUp.mix.map(Math.round) },
      // The client process's own CPU per row: on a 2-core machine it is taken from DynamoDB Local's share.
      clientCpuMsPerRow: {
        apply: +(applyExpiry.cpuMs / ROWS).toFixed(2),
        mixedApply: +(applyLarge.cpuMs / ROWS).toFixed(2),
        raw: +(floors.raw.reduce((sum, run) => sum + run.cpuMsPerWrite, 0) / RAW_RUNS).toFixed(2),
        sameMix: +(floors.mix.reduce((sum, run) => sum + run.cpuMsPerWrite, 0) / RAW_RUNS).toFixed(2),
      },
      peakMemory: {
        // The mixed files' applies, each in a process warmed up on WARM_FILE_ROWS rows; the peak from its clock's start.
        scope: applySmall.peakRssScope === 'phase' && applyLarge.peakRssScope === 'phase' ? `the apply, in a process warmed up on ${WARM_FILE_ROWS} rows` : 'the whole process (no VmHWM here)',
        [`${SMALL}Rows`]: Math.round(applySmall.peakRssMb),
        [`${ROWS}Rows`]: Math.round(applyLarge.peakRssMb),
        growthPercent: +(((applyLarge.peakRssMb - applySmall.peakRssMb) / applySmall.peakRssMb) * 100).toFixed(1),
        expiryOnly: Math.round(applyExpiry.peakRssMb),
        // RSS when each apply's clock started, after its warm-up.
        atStart: { [`${SMALL}Rows`]: Math.round(applySmall.rssAtStartMb), [`${ROWS}Rows`]: Math.round(applyLarge.rssAtStartMb) },
        // The highest of each process's whole life, its warm-up included.
        wholeProcess: { [`${SMALL}Rows`]: Math.round(applySmall.processPeakRssMb), [`${ROWS}Rows`]: Math.round(applyLarge.processPeakRssMb) },
        // Both applies' RSS (sampled every half second) up to the time the small one took.
        sameElapsedTime: {
          seconds: Math.round(applySmall.elapsedMs / 1000),
          [`${SMALL}Rows`]: peakWithin(applySmall.rssTimeline, applySmall.elapsedMs),
          [`${ROWS}Rows`]: peakWithin(applyLarge.rssTimeline, applySmall.elapsedMs),
        },
        // The live heap after V8's own full collections: what the apply holds, without V8's growth of its heap.
        liveHeapAfterFullGc: {
          [`${SMALL}Rows`]: roundedHeap(applySmall.liveHeap),
          [`${ROWS}Rows`]: roundedHeap(applyLarge.liveHeap),
        },
      },
      smallApply: applyFigures(applySmall, SMALL),
      ...(again ? { reapply: { ...again.result, seconds: +(again.elapsedMs / 1000).toFixed(1), rowsPerSecond: Math.round((ROWS / again.elapsedMs) * 1000), peakRssMb: Math.round(again.peakRssMb) } } : {}),
      ...(exported ? { export: { files: (exported.result as unknown as { keys: string[] }).keys.length, seconds: +(exported.elapsedMs / 1000).toFixed(1), peakRssMb: Math.round(exported.peakRssMb) } } : {}),
      writeUnitsPerRow,
      // At the mixed file's CPU per row, the dearer of the two.
      awsArithmetic: await arithmetic(applyLarge.cpuMs / ROWS),
    };
    console.log(JSON.stringify(report, null, 2));
    recordRun('account-updater', report);
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
