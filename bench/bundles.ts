/**
 * Bundle size and cold initialization of every Lambda function, from the
 * bundles `cdk synth` builds: a fresh Node process imports the bundle and
 * serves one event, next to one that imports an empty handler.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { median, REPO_ROOT } from './support.ts';

export interface BundleFigure {
  functionName: string;
  /** Route functions are described as `METHOD /v3/path` (infra/api.ts). */
  description: string;
  bundle: string;
  bytes: number;
  gzipBytes: number;
}

interface TemplateResource {
  Type: string;
  Metadata?: Record<string, string>;
  Properties?: { Description?: string };
}

export function synthesizeBundles(): string {
  execFileSync('npx', ['cdk', 'synth', '--quiet'], { cwd: REPO_ROOT, stdio: 'inherit' });
  return path.join(REPO_ROOT, 'cdk.out');
}

export function bundleFigures(cdkOut: string): BundleFigure[] {
  const templateFile = readdirSync(cdkOut).find((name) => name.endsWith('.template.json'));
  if (!templateFile) throw new Error('no template in cdk.out');
  const template = JSON.parse(readFileSync(path.join(cdkOut, templateFile), 'utf8')) as { Resources: Record<string, TemplateResource> };
  const figures: BundleFigure[] = [];
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    const assetPath = resource.Metadata?.['aws:asset:path'];
    if (resource.Type !== 'AWS::Lambda::Function' || !assetPath) continue;
    const bundle = path.join(cdkOut, assetPath, 'index.mjs');
    const bytes = statSync(bundle).size;
    figures.push({
      functionName: logicalId.replace(/[A-F0-9]{8}$/, ''),
      description: resource.Properties?.Description ?? '',
      bundle,
      bytes,
      gzipBytes: gzipSync(readFileSync(bundle)).length,
    });
  }
  return figures.sort((a, b) => a.functionName.localeCompare(b.functionName));
}

const HARNESS = `
const started = performance.now();
const module = await import(process.argv[2]);
const imported = performance.now();
try { await module.handler(JSON.parse(process.env.BENCH_EVENT), { getRemainingTimeInMillis: () => 10000, functionName: 'bench', awsRequestId: 'bench' }); } catch {}
const served = performance.now();
console.log(JSON.stringify({ initMs: imported - started, firstEventMs: served - imported }));
process.exit(0);
`;

/** Median of `runs` fresh processes, each importing the bundle and serving one event. */
export function coldStart(bundle: string, env: Record<string, string>, event: unknown, runs = 3): { initMs: number; firstEventMs: number } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-cold-'));
  const harness = path.join(dir, 'harness.mjs');
  writeFileSync(harness, HARNESS);
  const samples = Array.from({ length: runs }, () => {
    const result = spawnSync(process.execPath, [harness, bundle], { env: { ...process.env, ...env, BENCH_EVENT: JSON.stringify(event), LOG_LEVEL: 'ERROR' }, encoding: 'utf8' });
    const line = result.stdout.trim().split('\n').pop() ?? '{}';
    return JSON.parse(line) as { initMs: number; firstEventMs: number };
  });
  return { initMs: median(samples.map((s) => s.initMs)), firstEventMs: median(samples.map((s) => s.firstEventMs)) };
}

export function emptyHandlerBundle(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-empty-'));
  const file = path.join(dir, 'index.mjs');
  writeFileSync(file, 'export const handler = async () => ({ statusCode: 200, body: "{}" });\n');
  return file;
}
