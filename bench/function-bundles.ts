/**
 * Every Lambda function's bundle, built in memory with the stack's own esbuild
 * options (infra/bundling.ts), and its "floor": a bundle that only constructs
 * the AWS SDK clients that function uses. Shared by the cold-start benchmark and
 * the bundle-content tests.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import type { Metafile } from 'esbuild';
import { LAMBDA_BUNDLE_OPTIONS } from '#infra/bundling.ts';
import { bundlingDefinesFor } from '#infra/bundled-assets.ts';
import { routes } from '#shared/platform/routes.ts';

const REPO_ROOT = path.resolve(import.meta.dirname, '..');

/** The client class each SDK client package exports; a new package must be named here. */
const CLIENT_CLASSES: Readonly<Record<string, string>> = {
  '@aws-sdk/client-dynamodb': 'DynamoDBClient',
  '@aws-sdk/client-kms': 'KMSClient',
  '@aws-sdk/client-s3': 'S3Client',
  '@aws-sdk/client-secrets-manager': 'SecretsManagerClient',
  '@aws-sdk/client-sfn': 'SFNClient',
  '@aws-sdk/client-eventbridge': 'EventBridgeClient',
  '@aws-sdk/client-sqs': 'SQSClient',
  '@aws-sdk/client-cloudformation': 'CloudFormationClient',
};

export interface FunctionBundle {
  /** The function's file name under functions/, e.g. `paymethods-get`. */
  name: string;
  code: string;
  /** The source map, when the options write one: measured as deployed (loaded only with --enable-source-maps). */
  map?: string;
  bytes: number;
  /** npm packages that put at least one byte into the bundle. */
  packages: Set<string>;
  /** AWS SDK client packages among them (`@aws-sdk/client-*`). */
  sdkClients: string[];
}

/** Every deployed function: one file per function under functions/. */
export function functionNames(): string[] {
  return readdirSync(path.join(REPO_ROOT, 'functions'))
    .filter((file) => file.endsWith('.ts'))
    .map((file) => file.slice(0, -'.ts'.length))
    .sort();
}

/** The function as `cdk synth` bundles it: same options, same `define`s. */
export async function buildFunction(name: string): Promise<FunctionBundle> {
  const route = routes.find((candidate) => candidate.handler === name);
  const define = (route && bundlingDefinesFor(route)) ?? {};
  return bundled(name, await build({ ...LAMBDA_BUNDLE_OPTIONS, entryPoints: [path.join(REPO_ROOT, 'functions', `${name}.ts`)], define, write: false, outfile: 'index.mjs', metafile: true, logLevel: 'silent' }));
}

/** A handler that constructs the given SDK clients at module scope and does nothing else. */
export async function buildFloor(sdkClients: readonly string[]): Promise<FunctionBundle> {
  const source = [
    ...sdkClients.map((pkg, index) => `import { ${clientClass(pkg)} as Client${index} } from '${pkg}';`),
    `const clients = [${sdkClients.map((_pkg, index) => `new Client${index}({})`).join(', ')}];`,
    'export const handler = async () => ({ statusCode: 200, body: String(clients.length) });',
  ].join('\n');
  const floorName = `floor(${sdkClients.map((pkg) => pkg.replace('@aws-sdk/client-', '')).join('+') || 'no client'})`;
  return bundled(floorName, await build({ ...LAMBDA_BUNDLE_OPTIONS, stdin: { contents: source, resolveDir: REPO_ROOT, loader: 'js' }, write: false, outfile: 'index.mjs', metafile: true, logLevel: 'silent' }));
}

/** Writes a bundle where a fresh process can import it; returns its path. */
export function writeBundle(bundle: FunctionBundle, dir: string): string {
  const folder = path.join(dir, bundle.name.replace(/[^\w+-]/g, '_'));
  mkdirSync(folder, { recursive: true });
  const file = path.join(folder, 'index.mjs');
  writeFileSync(file, bundle.code);
  if (bundle.map !== undefined) writeFileSync(`${file}.map`, bundle.map);
  return file;
}

function clientClass(pkg: string): string {
  const name = CLIENT_CLASSES[pkg];
  if (!name) throw new Error(`bench/function-bundles.ts: name the client class of ${pkg} in CLIENT_CLASSES`);
  return name;
}

function bundled(name: string, result: { outputFiles?: { text: string; path: string }[]; metafile?: Metafile }): FunctionBundle {
  const output = result.outputFiles?.find((file) => file.path.endsWith('index.mjs'));
  const map = result.outputFiles?.find((file) => file.path.endsWith('index.mjs.map'));
  if (!output || !result.metafile) throw new Error(`no bundle for ${name}`);
  const meta = Object.entries(result.metafile.outputs).find(([file]) => file.endsWith('index.mjs'))?.[1];
  // Inputs esbuild read but tree-shook away contribute no bytes: count only what reaches the output.
  const kept = Object.entries(meta?.inputs ?? {}).filter(([, input]) => input.bytesInOutput > 0);
  const packages = new Set(kept.flatMap(([file]) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)?.[1] ?? []));
  return {
    name,
    code: output.text,
    ...(map ? { map: map.text } : {}),
    bytes: Buffer.byteLength(output.text),
    packages,
    sdkClients: [...packages].filter((pkg) => pkg.startsWith('@aws-sdk/client-')).sort(),
  };
}
