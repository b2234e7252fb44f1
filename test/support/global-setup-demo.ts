import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startRuntimeChild } from './global-setup.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');

/**
 * Browser tests drive the demo checkout, which `npm start` serves only without
 * LOCAL_SEED (it uses the demo organization and its printed publishable key):
 * a runtime of their own, started the way a user starts it.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  return startRuntimeChild(project, { logFile: path.join(repoRoot, 'test-output', 'local-runtime-e2e.log'), env: { LOCAL_SEED: '' } });
}
