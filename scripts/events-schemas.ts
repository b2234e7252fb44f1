/**
 * npm run events:schemas: writes the JSON Schema of every domain event's
 * detail (shared/http/schemas/events.ts) to docs/events.schema.json. A unit
 * test fails while the committed file differs from what the code generates.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { serializeEventSchemas } from '#shared/http/schemas/events.ts';

const SCHEMA_FILE = fileURLToPath(new URL('../docs/events.schema.json', import.meta.url));

await writeFile(SCHEMA_FILE, serializeEventSchemas());
console.log(`wrote ${SCHEMA_FILE}`);
