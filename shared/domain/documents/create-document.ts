import { InvalidRequest, OutcomeUnknown } from '../errors.ts';
import type { IdempotencyCompletion } from '../idempotency.ts';
import { completionOf } from '../idempotency.ts';
import { newToken } from '../ids.ts';
import type { AvailableDocument } from './document.ts';
import { documentObjectKey, retentionRuleDate } from './document.ts';
import { checkFile, detectType, mediaTypeOf } from './file-type.ts';
import type { DocumentDeps } from './ports.ts';
import { DuplicateDocument } from './ports.ts';
import { normalizeFileName, parseUploadMetadata, resourceOf } from './validation.ts';

export interface UploadedFile {
  /** File name as the client sent it (a path is stripped here). */
  name: string;
  /** Media type of the file part, lower case without parameters. */
  contentType: string | undefined;
  bytes: Uint8Array;
  /** Lowercase hex SHA-256 of the bytes, computed while they streamed in. */
  sha256: string;
}

/**
 * Input of a single-request upload. The HTTP layer has parsed the multipart
 * body; everything the client said is still unchecked here. (An
 * Idempotency-Key wrapper goes around the route handler that calls this.)
 */
export interface CreateDocumentInput {
  organizationId: string;
  metadata: unknown;
  file: UploadedFile;
  /** The Idempotency-Key's answer, stored in the record's own transaction. */
  completion?: IdempotencyCompletion<AvailableDocument>;
}

/**
 * Stores the file, then the record (the commit point). If the record was
 * certainly not written the file is deleted again; if its outcome is unknown
 * the file stays, since the record may exist. So a failure never leaves a
 * record without its file; at worst (S3 failing that delete too, or an
 * unknown outcome that did not commit) a file without a record, which no
 * answer names. The same bytes already stored for the organization and
 * resource_id are DuplicateDocument, decided by the record's own write (two
 * concurrent uploads of one file: one commits, the other is refused), and
 * the refused upload's file is deleted again.
 */
export async function createDocument(input: CreateDocumentInput, deps: DocumentDeps): Promise<AvailableDocument> {
  const metadata = parseUploadMetadata(input.metadata);
  const fileName = normalizeFileName(input.file.name, 'file');
  const checked = checkFile(
    {
      fileName: fileName.name,
      contentType: input.file.contentType,
      detected: detectType(input.file.bytes),
      size: input.file.bytes.length,
      resource: metadata.value?.resource ?? resourceOf(input.metadata),
    },
    'file',
  );
  const issues = [...metadata.issues, ...fileName.issues, ...('issues' in checked ? checked.issues : [])];
  if (!metadata.value || !('type' in checked) || issues.length > 0) throw new InvalidRequest(issues);

  const documentId = newToken('doc_');
  const objectKey = documentObjectKey(input.organizationId, documentId);
  await deps.files.put(objectKey, input.file.bytes, mediaTypeOf(checked.type));
  // Received once the file is stored: that is when the upload completed.
  const receivedAt = (deps.clock?.() ?? new Date()).toISOString();
  const document: AvailableDocument = {
    document_id: documentId,
    organization_id: input.organizationId,
    resource: metadata.value.resource,
    resource_id: metadata.value.resource_id,
    ...(metadata.value.description !== undefined ? { description: metadata.value.description } : {}),
    file: fileName.name,
    status: 'available',
    type: checked.type,
    size: input.file.bytes.length,
    received_at: receivedAt,
    object_key: objectKey,
    sha256: input.file.sha256,
    scan_status: 'pending',
    ...retention(metadata.value.resource, checked.type, receivedAt),
    created_at: receivedAt,
  };
  try {
    await deps.documents.put(document, { completion: completionOf(input.completion, (): AvailableDocument => document) });
  } catch (error) {
    // A duplicate's file was never the evidence of anything: it goes like any file whose record was not written.
    if (error instanceof DuplicateDocument || !(error instanceof OutcomeUnknown)) await deps.files.delete(objectKey).catch(() => undefined);
    throw error;
  }
  return document;
}

/** `retain_until` when a rule keeps the document, and `legal_hold` (false until set). */
export function retention(resource: AvailableDocument['resource'], type: AvailableDocument['type'], receivedAt: string): Pick<AvailableDocument, 'retain_until' | 'legal_hold'> {
  const until = retentionRuleDate(resource, type, receivedAt);
  return { ...(until !== undefined ? { retain_until: until } : {}), legal_hold: false };
}
