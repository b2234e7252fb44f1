import { App } from 'aws-cdk-lib';
import { definePaymentsApp } from './payments-app.ts';

// CDK writes "Bundling asset <path>..." to stderr for each of the ~25 function bundles, unconditionally; it is
// progress, not a finding, and would be most of what `cdk synth --quiet` prints. Only that exact line is dropped:
// esbuild's own errors, CDK's warnings and errors, and anything else still reach the terminal.
const BUNDLING_PROGRESS = /^Bundling asset [^\n]+\.\.\.\n$/;
const writeStderr = process.stderr.write.bind(process.stderr);
process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) =>
  (typeof chunk === 'string' && BUNDLING_PROGRESS.test(chunk) ? true : writeStderr(chunk, ...rest))) as typeof process.stderr.write;

definePaymentsApp(new App());
