import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * The client-side tokenization library as the service serves it. In Lambda the
 * built script is inlined into the function bundle at synth time (esbuild
 * `define`, see infra/tokenization.ts), so the function reads no file; locally
 * the runtime builds `client/dist/tokenize.js` at start and it is read from there.
 */
declare const __TOKENIZE_SCRIPT__: string | undefined;

export interface ScriptAsset {
  body: string;
  /** Strong validator: the content's SHA-256. */
  etag: string;
  /** First 12 hex digits of the hash: `?v=<version>` URLs are immutable. */
  version: string;
}

let asset: ScriptAsset | undefined;

export function tokenizeScript(): ScriptAsset {
  asset ??= assetOf(
    typeof __TOKENIZE_SCRIPT__ === 'string' ? __TOKENIZE_SCRIPT__ : readFileSync(new URL('../../client/dist/tokenize.js', import.meta.url), 'utf8'),
  );
  return asset;
}

export function assetOf(body: string): ScriptAsset {
  const hash = createHash('sha256').update(body).digest('hex');
  return { body, etag: `"${hash.slice(0, 32)}"`, version: hash.slice(0, 12) };
}

/** Unversioned URLs may change at any deploy: a short life, revalidated by ETag. */
export const SCRIPT_MAX_AGE_SECONDS = 300;
export const VERSIONED_SCRIPT_MAX_AGE_SECONDS = 31_536_000;
