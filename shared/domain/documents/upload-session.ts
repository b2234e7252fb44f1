/**
 * Upload sessions: files too big for one API request (the Lambda payload cap)
 * go straight to S3 through a presigned POST, and an S3 event finalizes them
 * with the same checks a single-request upload gets.
 */
import { createHash } from 'node:crypto';
import { formatIssue } from '../errors.ts';
import type { IdempotencyCompletion } from '../idempotency.ts';
import { completionOf } from '../idempotency.ts';
import { newToken } from '../ids.ts';
import type { AvailableDocument, DocumentType, StoredDocument } from './document.ts';
import { MAX_FILE_BYTES, checkedUploadObjectKey, parseUploadObjectKey, uploadObjectKey } from './document.ts';
import { retention } from './create-document.ts';
import { NEUTRAL_CONTENT_TYPES, SNIFF_BYTES, TextScan, checkFile, sniffBinaryType, typeOfExtension } from './file-type.ts';
import type { DocumentDeps, DocumentFiles } from './ports.ts';
import { DuplicateDocument } from './ports.ts';
import { parseUploadSessionRequest } from './validation.ts';

/** How long the presigned POST accepts a file. */
export const UPLOAD_WINDOW_SECONDS = 15 * 60;
/** The pending record outlives the window by a day, then the table's TTL removes it. */
const PENDING_RECORD_TTL_SECONDS = UPLOAD_WINDOW_SECONDS + 24 * 60 * 60;
/** A rejected record stays a week so the client can read the reason. */
const REJECTED_RECORD_TTL_SECONDS = 7 * 24 * 60 * 60;

export interface UploadSession {
  document: StoredDocument;
  upload: { url: string; fields: Record<string, string>; expires_at: string };
}

/** Opens a session: a pending record and a presigned POST pinned to its upload key. */
export async function createUploadSession(
  input: { organizationId: string; body: unknown; completion?: IdempotencyCompletion<UploadSession> },
  deps: DocumentDeps,
): Promise<UploadSession> {
  const request = parseUploadSessionRequest(input.body);

  const now = deps.clock?.() ?? new Date();
  const documentId = newToken('doc_');
  const uploadKey = uploadObjectKey(input.organizationId, documentId);
  const expiresAt = new Date(now.getTime() + UPLOAD_WINDOW_SECONDS * 1000);
  const form = await deps.files.uploadForm(uploadKey, {
    maxBytes: MAX_FILE_BYTES,
    expiresInSeconds: UPLOAD_WINDOW_SECONDS,
    ...(request.sha256 !== undefined ? { sha256: request.sha256 } : {}),
  });
  const document: StoredDocument = {
    document_id: documentId,
    organization_id: input.organizationId,
    resource: request.resource,
    resource_id: request.resource_id,
    ...(request.description !== undefined ? { description: request.description } : {}),
    file: request.file_name,
    status: 'pending',
    upload_key: uploadKey,
    upload_expires_at: expiresAt.toISOString(),
    ...(request.sha256 !== undefined ? { declared_sha256: request.sha256 } : {}),
    created_at: now.toISOString(),
  };
  const upload = { ...form, expires_at: expiresAt.toISOString() };
  await deps.documents.put(document, {
    expiresAt: new Date(now.getTime() + PENDING_RECORD_TTL_SECONDS * 1000),
    completion: completionOf(input.completion, (stored: StoredDocument) => ({ document: stored, upload })),
  });
  return { document, upload };
}

export type FinalizeOutcome = { status: 'available'; type: DocumentType } | { status: 'rejected' } | { status: 'ignored' };

const IGNORED: FinalizeOutcome = { status: 'ignored' };

/**
 * Runs on every object created under the upload prefix. S3 delivers events at
 * least once, so every step can be repeated: the record moves out of
 * `pending` only by a conditional write, and a repeat finds it moved and only
 * tidies the upload key away.
 */
export async function finalizeUpload(objectKey: string, deps: DocumentDeps): Promise<FinalizeOutcome> {
  const names = parseUploadObjectKey(objectKey);
  if (!names) return IGNORED;
  const { organizationId, documentId } = names;
  const document = await deps.documents.get(organizationId, documentId);
  if (!document || document.status !== 'pending') {
    // A repeat, a session deleted or expired meanwhile, or a key nobody handed out: nothing may stay behind,
    // neither the upload nor a copy of it the record does not keep (the copy first: its key needs the upload's tag).
    const upload = await deps.files.head(objectKey);
    const copy = upload && checkedUploadObjectKey(organizationId, documentId, upload.tag);
    if (copy && document?.object_key !== copy) await deps.files.delete(copy);
    await deps.files.delete(objectKey);
    return IGNORED;
  }
  const upload = await deps.files.head(objectKey);
  if (!upload) return IGNORED;
  // The form can be posted again until it expires: what is checked and kept is a copy of this version, which no POST can touch.
  const finalKey = checkedUploadObjectKey(organizationId, documentId, upload.tag);
  // Written again since the HEAD: that write's own event finalizes it.
  if ((await deps.files.copy(objectKey, finalKey, upload.tag)) === 'changed') return IGNORED;
  const stored = await deps.files.head(finalKey);
  if (!stored) return IGNORED;

  const reject = async (reason: string): Promise<FinalizeOutcome> => {
    const now = deps.clock?.() ?? new Date();
    const marked = await deps.documents.markRejected(organizationId, documentId, reason, new Date(now.getTime() + REJECTED_RECORD_TTL_SECONDS * 1000));
    await deps.files.delete(finalKey);
    await deps.files.delete(objectKey);
    return marked ? { status: 'rejected' } : IGNORED;
  };
  const verdict = await inspect(finalKey, document, stored, deps.files);
  if ('reason' in verdict) return reject(verdict.reason);
  // S3 refuses a form whose file does not have the declared checksum; this holds should a file ever arrive another way.
  if (document.declared_sha256 !== undefined && verdict.sha256 !== document.declared_sha256) {
    return reject(`the file's SHA-256 is ${verdict.sha256}, not the sha256 the session declared (${document.declared_sha256})`);
  }

  // Read again after the check, which can take seconds for a large text file: the list's order should be
  // the order documents become available in, or a page boundary remembered meanwhile would miss this one.
  const receivedAt = (deps.clock?.() ?? new Date()).toISOString();
  const available: AvailableDocument = {
    ...document,
    status: 'available',
    type: verdict.type,
    size: stored.size,
    received_at: receivedAt,
    object_key: finalKey,
    sha256: verdict.sha256,
    scan_status: 'pending',
    ...retention(document.resource, verdict.type, receivedAt),
  };
  let marked: boolean;
  try {
    marked = await deps.documents.markAvailable(available);
  } catch (error) {
    if (!(error instanceof DuplicateDocument)) throw error;
    return reject(`the same file is already stored as document ${error.existingDocumentId} for this resource_id`);
  }
  if (!marked && (await deps.documents.get(organizationId, documentId))?.object_key !== finalKey) {
    // Deleted while we copied, or another version kept: this copy must not outlive the record.
    await deps.files.delete(finalKey);
  }
  await deps.files.delete(objectKey);
  return marked ? { status: 'available', type: verdict.type } : IGNORED;
}

/** S3's and s3rver's default when a POST declares no Content-Type: the client said nothing. */
const UNDECLARED_CONTENT_TYPES = new Set(['binary/octet-stream', ...NEUTRAL_CONTENT_TYPES]);

/**
 * The same checks as a single-request upload, in one streamed read of the
 * object: size from HEAD first (S3's policy enforces it in AWS, s3rver does
 * not), then the bytes once, hashed as they pass, their start sniffed and,
 * when the name says text, every chunk checked as text.
 */
async function inspect(
  key: string,
  document: StoredDocument,
  stored: { size: number; contentType: string | undefined },
  files: DocumentFiles,
): Promise<{ type: AvailableDocument['type']; sha256: string } | { reason: string }> {
  if (stored.size > MAX_FILE_BYTES) return { reason: `file is ${stored.size} bytes, more than ${MAX_FILE_BYTES}` };
  const read = await readOnce(await files.read(key), typeOfExtension(document.file) === 'txt');
  let detected: AvailableDocument['type'] | undefined;
  if (stored.size > 0) {
    detected = sniffBinaryType(read.start);
    if (!detected && read.text) detected = 'txt';
  }
  const declared = stored.contentType?.split(';')[0]?.trim().toLowerCase();
  const checked = checkFile(
    {
      fileName: document.file,
      contentType: declared && !UNDECLARED_CONTENT_TYPES.has(declared) ? declared : undefined,
      detected,
      size: stored.size,
      resource: document.resource,
    },
    'file',
  );
  return 'type' in checked ? { type: checked.type, sha256: read.sha256 } : { reason: checked.issues.map(formatIssue).join('; ') };
}

/** One pass over the bytes: their SHA-256, their first SNIFF_BYTES, and (when asked) whether they are text. */
async function readOnce(chunks: AsyncIterable<Uint8Array>, checkText: boolean): Promise<{ sha256: string; start: Uint8Array; text: boolean }> {
  const hash = createHash('sha256');
  const start: Uint8Array[] = [];
  let startBytes = 0;
  const scan = checkText ? new TextScan() : undefined;
  let text = checkText;
  for await (const chunk of chunks) {
    hash.update(chunk);
    if (startBytes < SNIFF_BYTES) {
      start.push(chunk.subarray(0, SNIFF_BYTES - startBytes));
      startBytes += Math.min(chunk.length, SNIFF_BYTES - startBytes);
    }
    if (text && scan && !scan.push(chunk)) text = false;
  }
  return { sha256: hash.digest('hex'), start: Buffer.concat(start), text: text && scan !== undefined && scan.end() };
}
