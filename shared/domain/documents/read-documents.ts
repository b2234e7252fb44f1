import { Conflict, NotFound } from '../errors.ts';
import type { AvailableDocument, StoredDocument } from './document.ts';
import { isAvailable, scanStatusOf } from './document.ts';
import { mediaTypeOf } from './file-type.ts';
import type { DocumentDeps, DocumentListQuery, DocumentPage } from './ports.ts';

export const DOWNLOAD_URL_SECONDS = 300;
/** What a download of a file still being scanned tells the client to wait: the local scanner answers within 10 s, GuardDuty usually within a minute. */
export const SCAN_PENDING_RETRY_SECONDS = 10;

/**
 * A document as its organization may see it. `deleting` ones are gone as far
 * as clients are concerned, and so are sessions whose upload window closed
 * without a file (the table's TTL removes them lazily).
 */
export async function getDocument(organizationId: string, documentId: string, deps: Pick<DocumentDeps, 'documents' | 'clock'>): Promise<StoredDocument> {
  const document = await deps.documents.get(organizationId, documentId);
  if (!document || !isVisible(document, deps.clock?.() ?? new Date())) throw new NotFound(`no document ${documentId}`);
  return document;
}

export function isVisible(document: StoredDocument, now: Date): boolean {
  if (document.status === 'deleting') return false;
  if (document.status === 'pending' && document.upload_expires_at !== undefined) {
    // A file posted just before the window closed is still being finalized: keep it visible a while longer.
    return Date.parse(document.upload_expires_at) + FINALIZE_GRACE_MS > now.getTime();
  }
  return true;
}

/** How long after the upload window a pending session stays readable, while its S3 event is processed. */
export const FINALIZE_GRACE_MS = 60 * 60 * 1000;

export async function listDocuments(query: DocumentListQuery, deps: Pick<DocumentDeps, 'documents'>): Promise<DocumentPage> {
  return deps.documents.list(query);
}

/** A short-lived URL of the stored file; only available documents whose scan found them clean have one. */
export async function documentDownloadUrl(organizationId: string, documentId: string, deps: DocumentDeps): Promise<string> {
  const document = await getDocument(organizationId, documentId, deps);
  if (!isAvailable(document)) {
    throw new Conflict('DOCUMENT_NOT_AVAILABLE', `document ${documentId} has no stored file (status ${document.status})`);
  }
  switch (scanStatusOf(document)) {
    case 'pending':
      throw new Conflict('SCAN_PENDING', `document ${documentId} is being scanned for malware; retry later`, [], SCAN_PENDING_RETRY_SECONDS);
    case 'infected':
      throw new Conflict('DOCUMENT_INFECTED', `document ${documentId} was found infected; its file was removed and is never served`);
    case 'failed':
      throw new Conflict('SCAN_FAILED', `the malware scan of document ${documentId} failed; its file is not served`);
    case 'clean':
      return downloadUrlOf(document, deps);
  }
}

function downloadUrlOf(document: AvailableDocument, deps: DocumentDeps): Promise<string> {
  return deps.files.downloadUrl(document.object_key, {
    fileName: document.file,
    contentType: mediaTypeOf(document.type),
    expiresInSeconds: DOWNLOAD_URL_SECONDS,
  });
}
