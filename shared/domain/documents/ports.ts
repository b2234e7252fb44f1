/** What the document use cases need from storage; adapters live in shared/store and shared/aws. */
import type { IdempotencyCompletion } from '../idempotency.ts';
import type { AvailableDocument, DocumentResource, DocumentType, StoredDocument } from './document.ts';

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
   * OutcomeUnknown when the write may or may not have landed.
   */
  put(document: StoredDocument, options?: { expiresAt?: Date; completion?: IdempotencyCompletion<StoredDocument> }): Promise<void>;
  get(organizationId: string, documentId: string): Promise<StoredDocument | undefined>;
  /** pending -> available, listed from now on. False when it was no longer pending. */
  markAvailable(document: AvailableDocument): Promise<boolean>;
  /** pending -> rejected, kept until `expiresAt` so the client can read why. False when it was no longer pending. */
  markRejected(organizationId: string, documentId: string, reason: string, expiresAt: Date): Promise<boolean>;
  /**
   * Flags the record `deleting` and takes it out of every list in one
   * conditional write. Returns the record as it was, or undefined when absent.
   */
  markDeleting(organizationId: string, documentId: string): Promise<StoredDocument | undefined>;
  /** Undoes markDeleting (only while still flagged), when the file could not be deleted. */
  restore(previous: StoredDocument): Promise<void>;
  remove(organizationId: string, documentId: string): Promise<void>;
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
  head(key: string): Promise<StoredFileFacts | undefined>;
  /** Every key under `prefix`. */
  keysUnder(prefix: string): Promise<string[]>;
  /** The first `length` bytes (fewer when the object is shorter). */
  readStart(key: string, length: number): Promise<Uint8Array>;
  /** The whole object as a stream of chunks, never held in memory at once. */
  read(key: string): Promise<AsyncIterable<Uint8Array>>;
  /** Copies `fromKey` as it was when it had `sourceTag`: 'changed' (nothing copied) when it has been written since, or is gone. */
  copy(fromKey: string, toKey: string, sourceTag: string): Promise<'copied' | 'changed'>;
  downloadUrl(key: string, options: { fileName: string; contentType: string; expiresInSeconds: number }): Promise<string>;
  /** A presigned form upload (S3 POST) pinned to `key`, accepting 1 to `maxBytes` bytes. */
  uploadForm(key: string, options: { maxBytes: number; expiresInSeconds: number }): Promise<{ url: string; fields: Record<string, string> }>;
}

export interface DocumentDeps {
  documents: DocumentRepository;
  files: DocumentFiles;
  /** Injected so tests can pin dates. */
  clock?: () => Date;
}
