/** What the document use cases need from storage; adapters live in shared/store and shared/aws. */
import type { IdempotencyCompletion } from '../idempotency.ts';
import { Conflict } from '../errors.ts';
import type { AvailableDocument, DocumentResource, DocumentType, ScanStatus, StoredDocument } from './document.ts';

/**
 * The same bytes are already a document of this organization and resource_id:
 * the store decides it atomically with the write that would have made a second one.
 */
export class DuplicateDocument extends Conflict {
  constructor(readonly existingDocumentId: string) {
    super('DUPLICATE_DOCUMENT', `the file is already stored as document ${existingDocumentId} for this resource_id`, [
      { field: 'file', message: `has the same bytes as document ${existingDocumentId}` },
    ]);
  }
}

export interface DocumentListQuery {
  organizationId: string;
  type?: DocumentType;
  resource?: DocumentResource;
  /** Inclusive bounds on the upload instant, `yyyy-mm-ddThh:mm:ss` (UTC). */
  from?: string;
  to?: string;
  pageSize: number;
  pageIndex: number;
  /** Opaque position returned with the previous page (`links.next`). */
  cursor?: string;
}

export interface DocumentPage {
  documents: AvailableDocument[];
  /** Set only when more documents follow; it positions the next page. */
  nextCursor?: string;
}

export interface DocumentRepository {
  /**
   * Writes a new record (the upload's commit point), with `completion`'s answer in the
   * same transaction; `expiresAt` lets the table forget an abandoned record.
   * An available document with a `sha256` claims its hash for its
   * organization and resource_id in the same transaction: DuplicateDocument
   * when another document holds it, and nothing is written.
   * OutcomeUnknown when the write may or may not have landed.
   */
  put(document: StoredDocument, options?: { expiresAt?: Date; completion?: IdempotencyCompletion<StoredDocument> }): Promise<void>;
  get(organizationId: string, documentId: string): Promise<StoredDocument | undefined>;
  /** pending -> available, listed from now on, claiming its hash as put does (DuplicateDocument). False when it was no longer pending. */
  markAvailable(document: AvailableDocument): Promise<boolean>;
  /** pending -> rejected, kept until `expiresAt` so the client can read why. False when it was no longer pending. */
  markRejected(organizationId: string, documentId: string, reason: string, expiresAt: Date): Promise<boolean>;
  /**
   * Flags the record `deleting` and takes it out of every list in one
   * conditional write, unless it is retained on `today` (legal hold, or
   * retain_until not passed): the check and the flag are one write, so a hold
   * set meanwhile cannot be missed. Returns the record as it was, 'retained'
   * (nothing changed), or undefined when absent.
   */
  markDeleting(organizationId: string, documentId: string, today: string): Promise<StoredDocument | 'retained' | undefined>;
  /** Undoes markDeleting (only while still flagged), when the file could not be deleted. */
  restore(previous: StoredDocument): Promise<void>;
  /** Removes the record and frees its hash (the same transaction). */
  remove(previous: StoredDocument): Promise<void>;
  /**
   * Records a scan's verdict on the file at `objectKey`, if the record still keeps that file.
   * Returns the record after the write, or undefined when it keeps another file or is gone.
   */
  setScanStatus(organizationId: string, documentId: string, objectKey: string, status: ScanStatus): Promise<StoredDocument | undefined>;
  /**
   * Sets legal_hold and/or retain_until, provided the record still has the
   * retain_until it was read with (`expected`), so that two concurrent PUTs
   * cannot shorten each other's date. Undefined when it changed meanwhile or is gone.
   */
  setRetention(
    previous: StoredDocument,
    change: { legal_hold?: boolean; retain_until?: string },
  ): Promise<StoredDocument | undefined>;
  /** Available documents, newest first; throws InvalidRequest for a cursor that is not this query's. */
  list(query: DocumentListQuery): Promise<DocumentPage>;
}

export interface StoredFileFacts {
  size: number;
  /** The version of the object's bytes: a new one with every write under the key (S3's ETag). */
  tag: string;
  /** As stored with the object; undefined when the uploader declared none. */
  contentType: string | undefined;
}

export interface DocumentFiles {
  put(key: string, bytes: Uint8Array, contentType: string): Promise<void>;
  /** Succeeds when the object is already gone; OutcomeUnknown when it failed but may have been deleted all the same. */
  delete(key: string): Promise<void>;
  /** Removes the bytes for good: the given version (a versioned bucket keeps it after a plain delete), or the object when none is given. */
  purge(key: string, versionId: string | undefined): Promise<void>;
  /** Locks the stored file (S3 Object Lock, governance mode): kept until `retainUntil` (`yyyy-mm-dd`, end of that day UTC) and/or while on legal hold. */
  retain(key: string, lock: { retainUntil?: string; legalHold: boolean }): Promise<void>;
  head(key: string): Promise<StoredFileFacts | undefined>;
  /** Every key under `prefix`. */
  keysUnder(prefix: string): Promise<string[]>;
  /** The whole object as a stream of chunks, never held in memory at once. */
  read(key: string): Promise<AsyncIterable<Uint8Array>>;
  /** Copies `fromKey` as it was when it had `sourceTag`: 'changed' (nothing copied) when it has been written since, or is gone. */
  copy(fromKey: string, toKey: string, sourceTag: string): Promise<'copied' | 'changed'>;
  downloadUrl(key: string, options: { fileName: string; contentType: string; expiresInSeconds: number }): Promise<string>;
  /**
   * A presigned form upload (S3 POST) pinned to `key`, accepting 1 to `maxBytes` bytes and,
   * when `sha256` (lowercase hex) is given, only a file with that SHA-256 (S3 checks it).
   */
  uploadForm(key: string, options: { maxBytes: number; expiresInSeconds: number; sha256?: string }): Promise<{ url: string; fields: Record<string, string> }>;
}

export interface DocumentDeps {
  documents: DocumentRepository;
  files: DocumentFiles;
  /** Injected so tests can pin dates. */
  clock?: () => Date;
}
