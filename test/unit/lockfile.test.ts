import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => JSON.parse(readFileSync(path.join(repoRoot, file), 'utf8')) as Record<string, unknown>;

/**
 * `npm install` rewrites package-lock.json whenever its root entry no longer
 * mirrors package.json (a changed `engines` range did exactly that): keep them
 * equal, so a newcomer's install leaves the committed lockfile as it is.
 * `.ci/run` also runs `npm install --package-lock-only` and fails on any change.
 */
describe('package-lock.json', () => {
  it('mirrors package.json in its root entry', () => {
    const manifest = read('package.json');
    const lock = read('package-lock.json') as { name: string; version: string; packages: Record<string, Record<string, unknown>> };
    const root = lock.packages[''] ?? {};
    expect({ name: lock.name, version: lock.version }).toEqual({ name: manifest.name, version: manifest.version });
    for (const field of ['name', 'version', 'dependencies', 'devDependencies', 'optionalDependencies', 'engines', 'bin']) {
      expect(root[field], field).toEqual(manifest[field]);
    }
  });

  it('pins every direct dependency to the exact version the lockfile installs', () => {
    const manifest = read('package.json') as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    const lock = read('package-lock.json') as { packages: Record<string, { version?: string }> };
    for (const [name, range] of Object.entries({ ...manifest.dependencies, ...manifest.devDependencies })) {
      expect(lock.packages[`node_modules/${name}`]?.version, name).toBe(range);
    }
  });
});
