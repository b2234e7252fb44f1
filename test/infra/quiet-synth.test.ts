/**
 * `npx cdk synth --quiet` prints only what needs someone's attention: no
 * bundling progress, no esbuild summaries, no warnings, no feature flag left
 * unconfigured. What remains are the CLI's own two lines for an app of more
 * than one stack (aws-cdk's synth prints them at info level whatever the
 * options; one stack and `--quiet` would print none).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { describe, expect, it } from 'vitest';
import { SERVICE_FEATURE_FLAGS } from '#infra/feature-flags.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const cdkJson = JSON.parse(readFileSync(join(root, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };

/** Recommended flags cdk.json sets otherwise, each with its reason in docs/development.md ("Feature flags"). */
const DECLINED_FLAGS = ['@aws-cdk/core:enableAdditionalMetadataCollection'];

describe('cdk synth --quiet', () => {
  it('sets every flag CDK recommends, or declines it in docs/development.md with a reason', () => {
    const recommended = cxapi.CURRENTLY_RECOMMENDED_FLAGS as Record<string, unknown>;
    const differing = Object.entries(recommended).filter(([flag, value]) => JSON.stringify(cdkJson.context[flag]) !== JSON.stringify(value)).map(([flag]) => flag);
    expect(differing).toEqual(DECLINED_FLAGS);
    const development = readFileSync(join(root, 'docs/development.md'), 'utf8');
    for (const flag of DECLINED_FLAGS) expect(development, flag).toMatch(new RegExp(`\`${flag}\`[^\\n]*: `));
    // PaymentsService sets the same flags on its own scope, for apps that set others (infra/feature-flags.ts).
    const cdkJsonFlags = Object.fromEntries(Object.entries(cdkJson.context).filter(([key]) => key.startsWith('@aws-cdk')));
    expect(cdkJsonFlags).toEqual(SERVICE_FEATURE_FLAGS);
  });

  it('prints nothing but the CLI\'s two lines for a two-stack app', async () => {
    const out = mkdtempSync(join(tmpdir(), 'quiet-synth-'));
    try {
      const { stdout, stderr } = await promisify(execFile)('npx', ['cdk', 'synth', '--quiet', '--no-notices', '--output', out], { cwd: root, env: { ...process.env, CI: 'true', FORCE_COLOR: '0' }, maxBuffer: 16 * 1024 * 1024 });
      const lines = `${stdout}${stderr}`.split('\n').filter((line) => line.trim() !== '');
      expect(lines).toEqual([
        `Successfully synthesized to ${out}`,
        'Supply a stack id (PaymentsApi-dev, PaymentsApi-account) to display its template.',
      ]);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 180_000);
});
