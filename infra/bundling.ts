/**
 * How every Lambda function is built and started, in one place that imports no
 * CDK: the stack (`serviceFunction`), the cold-start benchmark and the bundle
 * tests all build with these options, so what is measured and tested is what
 * is deployed.
 */
import type { BuildOptions } from 'esbuild';

/**
 * The Node.js major Lambda runs (`Runtime.NODEJS_24_X`, the newest LTS Lambda
 * offers) and the one every npm script runs locally: package.json pins the
 * `node` package of this major in devDependencies, and npm puts its binary
 * first on the PATH of every script. test/infra/node-runtime.test.ts keeps the
 * three in step.
 */
export const NODE_MAJOR = 24;

/**
 * NODE_OPTIONS of every function. Deliberately without `--enable-source-maps`:
 * it costs every cold start ~24 ms. Source maps are kept out of the deployed
 * code (see `sourceMapsDir`) and applied offline with `npm run symbolicate`.
 */
export const LAMBDA_NODE_OPTIONS: string | undefined = undefined;

/** esbuild options of every function bundle (entry, outfile and `define` are per function). */
export const LAMBDA_BUNDLE_OPTIONS = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: `node${NODE_MAJOR}`,
  minify: true,
  // Written beside the bundle, then moved out of the asset: nothing at runtime reads it.
  sourcemap: 'external',
  sourcesContent: false,
  mainFields: ['module', 'main'],
  // CommonJS dependencies inside an ESM bundle still call require().
  banner: { js: "import { createRequire } from 'module';const require = createRequire(import.meta.url);" },
} as const satisfies BuildOptions;

/** Where a synthesized function's source map is kept, under the cloud assembly (`cdk.out`). */
export const SOURCE_MAPS_DIR = 'source-maps';
