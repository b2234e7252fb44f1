/**
 * The shapes of the document views, for the OpenAPI document and the tests.
 * Apart from the views so that handlers, which only need the views, do not
 * bundle zod.
 */
import * as z from 'zod/mini';
import type { DocumentResource } from '#shared/domain/documents/document.ts';
import { DOCUMENT_RESOURCES, DOCUMENT_TYPES, MAX_FILE_BYTES, RETENTION_YEARS, SCAN_STATUSES } from '#shared/domain/documents/document.ts';
import type { UploadSession } from '#shared/domain/documents/upload-session.ts';
import { UPLOAD_WINDOW_SECONDS } from '#shared/domain/documents/upload-session.ts';

/** The evidence members of a stored file (available documents only). */
const evidence = {
  sha256: z.optional(z.string().check(z.regex(/^[0-9a-f]{64}$/))).check(
    z.meta({ description: 'Lowercase hex SHA-256 of the stored bytes, computed while they streamed in. Absent only on documents stored before it was kept.' }),
  ),
  scan_status: z.optional(z.enum(SCAN_STATUSES)).check(
    z.meta({ description: 'Malware scan of the stored file: pending until the scan ends, then clean, infected (the bytes were removed) or failed. Only clean files are served.' }),
  ),
  retain_until: z.optional(z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}$/))).check(
    z.meta({ format: 'date', description: `The file cannot be deleted before the end of this date (UTC): dispute audio (wav, mp3) is kept ${RETENTION_YEARS} years from received_date; PUT can extend it.` }),
  ),
  legal_hold: z.optional(z.boolean()).check(z.meta({ description: 'While true the document cannot be deleted.' })),
};

/** What the views return (their return types are inferred from these; the integration tests parse real answers with them). */
export const documentViewSchema = z.object({
  document_id: z.string().check(z.regex(/^doc_[A-Za-z0-9]+$/)),
  resource: z.enum(DOCUMENT_RESOURCES as [DocumentResource, ...DocumentResource[]]),
  resource_id: z.string(),
  type: z.optional(z.enum(DOCUMENT_TYPES)).check(z.meta({ description: 'Decided from the file\'s leading bytes; absent until an upload session\'s file is accepted.' })),
  file: z.string().check(z.meta({ description: 'The uploaded file name, without any path.' })),
  description: z.optional(z.string()),
  size: z.optional(z.int().check(z.minimum(1), z.maximum(MAX_FILE_BYTES))).check(z.meta({ description: 'Bytes received.' })),
  received_date: z.optional(z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}$/))).check(z.meta({ format: 'date', description: 'UTC date the upload completed.' })),
  status: z.enum(['pending', 'available', 'rejected']).check(z.meta({ description: 'Upload sessions start pending and end available or rejected.' })),
  reason: z.optional(z.string()).check(z.meta({ description: 'Why an upload session\'s file was rejected.' })),
  ...evidence,
});

export const documentListViewSchema = z.object({
  document_id: documentViewSchema.shape.document_id,
  resource: documentViewSchema.shape.resource,
  resource_id: z.string(),
  type: z.enum(DOCUMENT_TYPES),
  description: z.optional(z.string()),
  size: z.int().check(z.minimum(1), z.maximum(MAX_FILE_BYTES)),
  received_date: z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}$/), z.meta({ format: 'date' })),
  ...evidence,
});

/** `upload` as clients see it (the OpenAPI document's shape of it). */
export const uploadFormSchema = z
  .object({
    url: z.url().check(z.meta({ description: 'Where to POST the file (multipart/form-data): the fields below first, then the file as the last part, named file.' })),
    fields: z.record(z.string(), z.string()).check(z.meta({ description: 'Form fields of the presigned POST, sent as they are.' })),
    expires_at: z.string().check(z.meta({ format: 'date-time', description: `The presigned POST accepts a file until then (${UPLOAD_WINDOW_SECONDS / 60} minutes).` })),
  })
  .check(z.meta({ description: `A presigned S3 POST whose policy limits the file to ${MAX_FILE_BYTES} bytes.` })) satisfies z.ZodMiniType<UploadSession['upload']>;
