import path from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(import.meta.dirname, '../..');

/** The npm packages a handler's bundle pulls in, bundled as CDK bundles it. */
async function packagesIn(handler: string): Promise<Set<string>> {
  const result = await build({
    entryPoints: [path.join(repoRoot, 'functions', `${handler}.ts`)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    mainFields: ['module', 'main'],
    write: false,
    outfile: 'bundle.mjs',
    metafile: true,
    logLevel: 'silent',
    define: { TOKENIZE_SCRIPT: '""' },
  });
  // Inputs esbuild read but tree-shook away contribute no bytes: count only what reaches the output.
  const [output] = Object.values(result.metafile.outputs);
  const kept = Object.entries(output?.inputs ?? {}).filter(([, input]) => input.bytesInOutput > 0);
  return new Set(kept.flatMap(([file]) => /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)?.[1] ?? []));
}

// Cold starts grow with the bundle: a route must not carry what only other routes use.
describe('handler bundles', () => {
  it.each(['paymethods-get', 'paymethods-list-organization', 'paymethods-delete', 'documents-get', 'documents-list'])(
    '%s bundles neither zod (validation and OpenAPI schemas) nor the KMS client',
    async (handler) => {
      const packages = await packagesIn(handler);
      expect(packages.has('zod')).toBe(false);
      expect(packages.has('@aws-sdk/client-kms')).toBe(false);
    },
    60_000,
  );

  it('the event publisher bundles no zod, no KMS client and no DynamoDB client: it only reads what the stream hands it', async () => {
    const packages = await packagesIn('events-publish');
    for (const name of ['zod', '@aws-sdk/client-kms', '@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb', '@aws-sdk/client-s3']) expect(packages.has(name), name).toBe(false);
    expect(packages.has('@aws-sdk/client-eventbridge')).toBe(true);
  }, 60_000);

  it('the read routes of paymethods bundle no S3 client either', async () => {
    expect((await packagesIn('paymethods-get')).has('@aws-sdk/client-s3')).toBe(false);
  }, 60_000);
});
