/**
 * npm run --silent symbolicate -- <function> [--stack PaymentsApi-dev] [--cdk-out cdk.out] < stack.txt
 *
 * Deployed functions do not load source maps (--enable-source-maps costs every
 * cold start); `cdk synth`/`cdk deploy` keep each function's map in
 * cdk.out/source-maps/<stack>/<function>.mjs.map (CI keeps cdk.out as the
 * build's artifact). This rewrites the `index.mjs:<line>:<column>` positions
 * of a stack trace copied from the logs into source files and lines. Use the
 * cdk.out of the commit that was deployed: a map only fits its own bundle.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { stack: { type: 'string' }, 'cdk-out': { type: 'string', default: 'cdk.out' } } });
const [functionName] = positionals;
if (!functionName) {
  process.stderr.write('usage: npm run --silent symbolicate -- <function, e.g. paymethods-create-location> [--stack <stack>] [--cdk-out <dir>] < stack-trace.txt\n');
  process.exit(2);
}

const mapsDir = path.resolve(values['cdk-out'], 'source-maps');
const stacks = values.stack ? [values.stack] : existsSync(mapsDir) ? readdirSync(mapsDir) : [];
const mapFile = stacks.map((stack) => path.join(mapsDir, stack, `${functionName}.mjs.map`)).find((file) => existsSync(file));
if (!mapFile) {
  process.stderr.write(`no source map for ${functionName} under ${mapsDir}: run npx cdk synth (or use the deployed build's cdk.out)\n`);
  process.exit(2);
}

const map = new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8')));
const trace = readFileSync(0, 'utf8');
process.stdout.write(
  trace.replace(/(?:file:\/\/)?(?:\/var\/task\/)?index\.mjs:(\d+):(\d+)/g, (position, line: string, column: string) => {
    // Stack traces count lines and columns from 1; source maps from 0.
    const entry = map.findEntry(Number(line) - 1, Number(column) - 1) as { originalSource?: string; originalLine?: number; originalColumn?: number };
    if (!entry.originalSource) return position;
    // Sources are relative to where esbuild wrote the bundle: a folder directly under cdk.out.
    const source = path.relative(process.cwd(), path.resolve(values['cdk-out'], 'bundle', entry.originalSource.replace(/^file:\/\//, '')));
    return `${source}:${(entry.originalLine ?? 0) + 1}:${(entry.originalColumn ?? 0) + 1}`;
  }),
);
