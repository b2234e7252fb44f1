/**
 * Every benchmark run is kept as data: one JSON file under bench/results/ with
 * the same header (what ran, on which commit, on what machine) and the run's
 * figures. The docs quote the current figures and link the file; older runs
 * stay here instead of in the docs.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from './support.ts';

export const RESULTS_DIR = path.join(REPO_ROOT, 'bench', 'results');

export interface BenchRun {
  /** The command as a reader would type it, with the BENCH_* variables it ran with. */
  command: string;
  /** `git rev-parse HEAD`, and whether the work tree had uncommitted changes. */
  commit: string;
  dirty: boolean;
  /** When the run ended (ISO 8601 UTC). */
  date: string;
  machine: { cpus: number; cpuModel: string; memoryBytes: number; node: string; platform: string };
  figures: unknown;
  /** Runs copied from the docs' former journals carry what the journal said around their figures. */
  notes?: string[];
  source?: string;
}

function git(...args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

/** How this process was started: the npm script when there is one, else the script and its arguments. */
function command(environment: NodeJS.ProcessEnv = process.env, argv: readonly string[] = process.argv): string {
  const variables = Object.entries(environment)
    .filter(([name]) => name.startsWith('BENCH_'))
    .map(([name, value]) => `${name}=${value}`);
  const script = environment.npm_lifecycle_event ? [`npm run ${environment.npm_lifecycle_event}`] : [`node ${path.relative(REPO_ROOT, argv[1] ?? '')}`];
  const args = argv.slice(2);
  return [...variables, ...script, ...(args.length > 0 && environment.npm_lifecycle_event ? ['--', ...args] : args)].join(' ');
}

function describeRun(figures: unknown, now = new Date()): BenchRun {
  return {
    command: command(),
    commit: git('rev-parse', 'HEAD'),
    dirty: git('status', '--porcelain', '--untracked-files=no') !== '',
    date: now.toISOString(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? 'unknown', memoryBytes: os.totalmem(), node: process.version, platform: `${os.platform()} ${os.arch()}` },
    figures,
  };
}

/** Writes `<dir>/<name>/<date>.json` and returns its path; `name` says which benchmark ran. */
export function recordRun(name: string, figures: unknown, dir = RESULTS_DIR): string {
  const run = describeRun(figures);
  mkdirSync(path.join(dir, name), { recursive: true });
  const file = path.join(dir, name, `${run.date.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(run, null, 2)}\n`);
  process.stderr.write(`results written to ${path.relative(REPO_ROOT, file)}\n`);
  return file;
}
