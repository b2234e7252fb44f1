import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LAMBDA_BUNDLE_OPTIONS, NODE_MAJOR } from '#infra/bundling.ts';
import { LAMBDA_RUNTIME } from '#infra/functions.ts';
import { ACCOUNT_UPDATER_FUNCTION_SIZING } from '#shared/platform/function-sizing.ts';
import { lambdaHeapFlags } from '../../local/lambda-context.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const packageJson = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { devDependencies: Record<string, string>; scripts: Record<string, string> };

// One Node.js major from laptop to Lambda: what runs the tests is what runs the functions.
describe('Node.js runtime', () => {
  it(`deploys Node.js ${NODE_MAJOR} and bundles for it`, () => {
    expect(LAMBDA_RUNTIME.name).toBe(`nodejs${NODE_MAJOR}.x`);
    expect(LAMBDA_BUNDLE_OPTIONS.target).toBe(`node${NODE_MAJOR}`);
  });

  it('pins the node package of that major, which npm scripts put first on the PATH', () => {
    expect(packageJson.devDependencies.node).toMatch(new RegExp(`^${NODE_MAJOR}\\.\\d+\\.\\d+$`));
  });

  it('runs this test suite (and the processes it starts with process.execPath) on that major', () => {
    expect(Number(process.versions.node.split('.')[0])).toBe(NODE_MAJOR);
    expect(process.execPath).toBe(path.join(repoRoot, 'node_modules', 'node', 'bin', 'node'));
  });

  it('runs the local Account Updater engine with the heap Lambda gives the functions it runs', () => {
    // The runtime's bootstrap for a 1,024 MB function: --max-semi-space-size=51 --max-old-space-size=922.
    expect(lambdaHeapFlags(1024)).toEqual(['--max-semi-space-size=51', '--max-old-space-size=922']);
    // au:apply runs the check, the batches and the merge in one process: one size for the three.
    const [check, chunk, merge] = (['au-check', 'au-chunk', 'au-merge'] as const).map((name) => ACCOUNT_UPDATER_FUNCTION_SIZING[name].memoryMb);
    expect(new Set([check, chunk, merge]).size).toBe(1);
    expect(packageJson.scripts['au:apply']).toBe(`node ${lambdaHeapFlags(chunk!).join(' ')} --import tsx scripts/au-apply.ts`);
  });
});
