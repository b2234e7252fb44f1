/**
 * npm run openapi: writes the OpenAPI document (shared/http/openapi.ts) to
 * docs/openapi.json and the error-code table (shared/http/error-codes-doc.ts,
 * from the catalogue shared/platform/response-codes.ts) to docs/error-codes.md. Unit
 * tests fail while a committed file differs from what the code generates.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { errorCodesMarkdown } from '#shared/http/error-codes-doc.ts';
import { openApiDocument, serializeOpenApi } from '#shared/http/openapi.ts';

const OUTPUTS: ReadonlyArray<[string, () => string]> = [
  ['../docs/openapi.json', () => serializeOpenApi(openApiDocument())],
  ['../docs/error-codes.md', () => errorCodesMarkdown()],
];

for (const [relative, generate] of OUTPUTS) {
  const file = fileURLToPath(new URL(relative, import.meta.url));
  await writeFile(file, generate());
  console.log(`wrote ${file}`);
}
