import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorCodesMarkdown } from '#shared/http/error-codes-doc.ts';
import { GATEWAY_RESPONSES, METHOD_NOT_ALLOWED } from '#shared/http/gateway-responses.ts';
import { ALL_RESPONSE_CODES, CODE_DETAILS, statusOf } from '#shared/platform/response-codes.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const relative = path.join(dir, name);
    if (statSync(path.join(ROOT, relative)).isDirectory()) return sourceFiles(relative);
    return name.endsWith('.ts') ? [relative] : [];
  });
}

describe('the catalogue of response codes (shared/platform/response-codes.ts)', () => {
  it('is committed as docs/error-codes.md exactly as the code generates it', () => {
    expect(read('docs/error-codes.md'), 'docs/error-codes.md is out of date with shared/platform/response-codes.ts or the routes: run `npm run openapi` and commit the result').toBe(errorCodesMarkdown());
  });

  it('is linked from the API decisions, in the README\'s section and the document it points to', () => {
    const section = read('README.md').split('\n## API decisions')[1]?.split('\n## ')[0] ?? '';
    expect(section).toContain('](docs/error-codes.md)');
    expect(section).toContain('](docs/api-decisions.md)');
    expect(read('docs/api-decisions.md')).toContain('](error-codes.md)');
  });

  it('lists every code once in the table, each with its status', () => {
    const table = errorCodesMarkdown();
    for (const code of ALL_RESPONSE_CODES) {
      const rows = table.split('\n').filter((line) => line.startsWith(`| \`${code}\` |`));
      expect(rows, code).toHaveLength(1);
      if (CODE_DETAILS[code].surface === 'api') expect(rows[0], code).toContain(`| ${statusOf(code)} |`);
    }
  });

  it('names only codes the code raises: each one appears outside the catalogue', () => {
    const sources = ['shared', 'functions', 'local', 'scripts', 'infra']
      .flatMap(sourceFiles)
      .filter((file) => file !== 'shared/platform/response-codes.ts')
      .map(read)
      .join('\n');
    expect(ALL_RESPONSE_CODES.filter((code) => !sources.includes(`'${code}'`)), 'codes nothing raises: remove them from the catalogue').toEqual([]);
  });

  it('gives API Gateway\'s own answers the status of their code', () => {
    for (const spec of [...Object.values(GATEWAY_RESPONSES), METHOD_NOT_ALLOWED]) expect(spec.statusCode, spec.code).toBe(statusOf(spec.code));
  });
});
