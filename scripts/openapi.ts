/**
 * npm run openapi: writes the OpenAPI document (shared/http/openapi.ts) to
 * docs/openapi.json. A unit test fails while the committed file differs from
 * what the code generates.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { openApiDocument, serializeOpenApi } from '#shared/http/openapi.ts';

const OPENAPI_FILE = fileURLToPath(new URL('../docs/openapi.json', import.meta.url));

await writeFile(OPENAPI_FILE, serializeOpenApi(openApiDocument()));
console.log(`wrote ${OPENAPI_FILE}`);
