/**
 * npm run bench:cold-start [-- --runs 15] [-- --only paymethods-get,openapi-get]
 *
 * Each function's cold start against its floor (a bundle that only constructs
 * the SDK clients the function uses), both built with the stack's esbuild
 * options. Each sample is a fresh Node process (the one npm scripts run: the
 * major Lambda runs) with the deployed NODE_OPTIONS, timed from process start
 * to the handler module imported, as Lambda's init phase is. Function and
 * floor alternate (A/B, B/A) so drift on a shared machine hits both alike.
 * Ratios matter; absolute figures depend on the machine.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { LAMBDA_NODE_OPTIONS } from '#infra/bundling.ts';
import { buildFloor, buildFunction, functionNames, writeBundle } from './function-bundles.ts';
import type { FunctionBundle } from './function-bundles.ts';
import { recordRun } from './results.ts';
import { median } from './support.ts';

const { values: options } = parseArgs({ options: { runs: { type: 'string', default: process.env.BENCH_RUNS ?? '15' }, only: { type: 'string' } } });
const runs = Number(options.runs);
const only = options.only?.split(',');
const LIMIT = 1.3;

// What a deployed function finds in its environment (dummy values: nothing is called at import).
const LAMBDA_ENV: Record<string, string> = {
  PATH: process.env.PATH ?? '',
  ...(LAMBDA_NODE_OPTIONS ? { NODE_OPTIONS: LAMBDA_NODE_OPTIONS } : {}),
  AWS_REGION: 'us-east-1',
  AWS_DEFAULT_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
  AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
  AWS_LAMBDA_FUNCTION_NAME: 'bench',
  AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512',
  AWS_XRAY_CONTEXT_MISSING: 'IGNORE_ERROR',
  AWS_XRAY_DAEMON_ADDRESS: '127.0.0.1:2000',
  _HANDLER: 'index.handler',
  ENVIRONMENT_NAME: 'bench',
  TABLE_NAME: 'bench',
  DOCUMENTS_BUCKET: 'bench',
  DOCUMENTS_KMS_KEY_ID: 'bench',
  REPORTS_BUCKET: 'bench',
  VAULT_KEY_ID: 'bench',
  CREDENTIAL_MAC_KEY_ID: 'bench',
  POWERTOOLS_SERVICE_NAME: 'payments-api',
  POWERTOOLS_METRICS_NAMESPACE: 'PaymentsApi',
};

const HARNESS = `await import(process.argv[2]);
process.stdout.write(String(performance.now()));
`;

const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-cold-start-'));
try {
  const harness = path.join(dir, 'harness.mjs');
  writeFileSync(harness, HARNESS);

  const names = functionNames().filter((name) => !only || only.includes(name));
  const pairs: { fn: FunctionBundle; floor: FunctionBundle; fnFile: string; floorFile: string; fnMs: number[]; floorMs: number[] }[] = [];
  const floors = new Map<string, FunctionBundle>();
  for (const name of names) {
    const fn = await buildFunction(name);
    const key = fn.sdkClients.join('+');
    const floor = floors.get(key) ?? (await buildFloor(fn.sdkClients));
    floors.set(key, floor);
    pairs.push({ fn, floor, fnFile: writeBundle(fn, dir), floorFile: writeBundle(floor, dir), fnMs: [], floorMs: [] });
  }

  const importMs = (file: string): number => {
    const result = spawnSync(process.execPath, [harness, file], { env: LAMBDA_ENV, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`importing ${file} failed:\n${result.stderr}`);
    return Number(result.stdout);
  };
  for (let run = 0; run < runs; run++) {
    for (const pair of pairs) {
      if (run % 2 === 0) {
        pair.fnMs.push(importMs(pair.fnFile));
        pair.floorMs.push(importMs(pair.floorFile));
      } else {
        pair.floorMs.push(importMs(pair.floorFile));
        pair.fnMs.push(importMs(pair.fnFile));
      }
    }
    process.stderr.write(`\rrun ${run + 1}/${runs}`);
  }
  process.stderr.write('\n');

  const kib = (bytes: number) => (bytes / 1024).toFixed(0);
  console.log(`Node ${process.version}, NODE_OPTIONS=${LAMBDA_NODE_OPTIONS ?? '(none)'}, ${runs} runs each, median ms from process start to handler imported\n`);
  const header = ['function', 'KiB', 'floor KiB', 'size/floor', 'import ms', 'floor ms', 'import/floor', 'SDK clients'];
  const rows = pairs.map(({ fn, floor, fnMs, floorMs }) => {
    const sizeRatio = fn.bytes / floor.bytes;
    const importRatio = median(fnMs) / median(floorMs);
    const mark = (ratio: number) => `${ratio.toFixed(2)}${ratio > LIMIT ? ' !' : ''}`;
    return [fn.name, kib(fn.bytes), kib(floor.bytes), mark(sizeRatio), median(fnMs).toFixed(1), median(floorMs).toFixed(1), mark(importRatio), fn.sdkClients.map((pkg) => pkg.replace('@aws-sdk/client-', '')).join(', ') || '-'];
  });
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] as string).length)));
  const line = (cells: string[]) => cells.map((cell, column) => (column === 0 || column === 7 ? cell.padEnd(widths[column] as number) : cell.padStart(widths[column] as number))).join('  ');
  console.log(line(header));
  for (const row of rows) console.log(line(row));
  console.log(`\n! = above ${LIMIT}x the floor`);
  recordRun('cold-start', {
    runs,
    nodeOptions: LAMBDA_NODE_OPTIONS ?? null,
    limit: LIMIT,
    functions: pairs.map(({ fn, floor, fnMs, floorMs }) => ({
      function: fn.name,
      bytes: fn.bytes,
      floorBytes: floor.bytes,
      medianImportMs: median(fnMs),
      floorMedianImportMs: median(floorMs),
      sdkClients: fn.sdkClients,
    })),
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
