/**
 * Builds the tokenization library: `client/tokenize.ts` -> `client/dist/tokenize.js`
 * (minified ES module, what GET /v3/js/tokenize.js serves) and its types
 * (`client/tokenize.d.ts`, also copied beside the build).
 *
 *   npm run build:client
 *
 * `npm start` builds the script on the fly; the CDK stack inlines the same build
 * into the function that serves it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, buildSync, stop } from 'esbuild';
import type { BuildOptions } from 'esbuild';

const CLIENT_DIR = fileURLToPath(new URL('.', import.meta.url));
export const TOKENIZE_SOURCE = fileURLToPath(new URL('./tokenize.ts', import.meta.url));
export const TOKENIZE_DIST = fileURLToPath(new URL('./dist/tokenize.js', import.meta.url));

/** Browsers from 2021 on: ES2020 keeps `import.meta` and optional chaining native. */
export const BROWSER_TARGETS = ['es2020', 'chrome90', 'firefox90', 'safari15'];

const BUILD_OPTIONS = {
  entryPoints: [TOKENIZE_SOURCE],
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: BROWSER_TARGETS,
  minify: true,
  legalComments: 'none',
  write: false,
} satisfies BuildOptions;

/** For long-running processes (the local runtime): the esbuild child is stopped and reaped afterwards. */
export async function bundleTokenizeScript(): Promise<string> {
  const result = await build(BUILD_OPTIONS);
  await stop();
  return outputOf(result.outputFiles);
}

/** For the CDK app, which builds its constructs synchronously and exits when done. */
export function bundleTokenizeScriptSync(): string {
  return outputOf(buildSync(BUILD_OPTIONS).outputFiles);
}

function outputOf(files: ReadonlyArray<{ text: string }> | undefined): string {
  const [output] = files ?? [];
  if (!output) throw new Error('esbuild produced no output for client/tokenize.ts');
  return output.text;
}

export async function writeTokenizeScript(): Promise<string> {
  const code = await bundleTokenizeScript();
  mkdirSync(new URL('./dist/', import.meta.url), { recursive: true });
  writeFileSync(TOKENIZE_DIST, code);
  return code;
}

/** Declarations from the source alone (isolatedDeclarations), so they cannot drift from it. */
export async function tokenizeDeclarations(): Promise<string> {
  const { readFileSync } = await import('node:fs');
  const { default: ts } = await import('typescript');
  const { outputText, diagnostics } = ts.transpileDeclaration(readFileSync(TOKENIZE_SOURCE, 'utf8'), {
    fileName: 'tokenize.ts',
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ES2022, isolatedDeclarations: true, declaration: true, removeComments: false },
  });
  if (diagnostics?.length) throw new Error(`declarations: ${diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('; ')}`);
  return `// Generated from client/tokenize.ts by \`npm run build:client\`; do not edit.\n${outputText}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const code = await writeTokenizeScript();
  const declarations = await tokenizeDeclarations();
  writeFileSync(`${CLIENT_DIR}tokenize.d.ts`, declarations);
  writeFileSync(`${CLIENT_DIR}dist/tokenize.d.ts`, declarations);
  const bytes = Buffer.byteLength(code);
  console.log(JSON.stringify({ script: 'client/dist/tokenize.js', minified_bytes: bytes, gzipped_bytes: gzipSync(code, { level: 9 }).length }));
}
