/**
 * The document aggregate: what is stored and the limits the contract fixes.
 * No AWS and no HTTP here; what clients see is shared/http/documents.ts.
 */
import { DOCUMENT_OBJECT_PREFIX, UPLOAD_OBJECT_PREFIX } from '#shared/platform/names.ts';

export const DOCUMENT_TYPES = ['jpeg', 'png', 'tiff', 'txt', 'bmp', 'wav', 'mp3'] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

/** The resource a document supports, and the prefix its id must carry. */
export const RESOURCE_ID_PREFIXES = { application: 'app_', dispute: 'dsp_', bankaccount: 'bac_' } as const;
export type DocumentResource = keyof typeof RESOURCE_ID_PREFIXES;
export const DOCUMENT_RESOURCES = Object.keys(RESOURCE_ID_PREFIXES) as DocumentResource[];

export const MAX_FILE_BYTES = 8_000_000;
export const MAX_DESCRIPTION_CODE_POINTS = 512;
export const MAX_FILE_NAME_CODE_POINTS = 255;
export const MAX_RESOURCE_ID_LENGTH = 26;

/**
 * `available`: the file is stored and the document is listed. Upload sessions
 * start `pending` and end `available` or `rejected`. `deleting` is the short
 * window of a delete in progress: the document answers 404 and a retried
 * DELETE completes it.
 */
export type DocumentStatus = 'pending' | 'available' | 'rejected' | 'deleting';

export interface StoredDocument {
  document_id: string;
  organization_id: string;
  resource: DocumentResource;
  resource_id: string;
  description?: string;
  /** The client's file name without any path. */
  file: string;
  status: DocumentStatus;
  type?: DocumentType;
  size?: number;
  /** ISO 8601 instant (UTC, milliseconds) the upload completed; the list sort key. */
  received_at?: string;
  /** Object key of the stored file, once available. */
  object_key?: string;
  /** Object key an upload session posts to, while pending. */
  upload_key?: string;
  /** ISO 8601 instant after which a pending session no longer accepts a file. */
  upload_expires_at?: string;
  /** Why an upload session's file was refused. */
  reason?: string;
  created_at: string;
}

/** An available document: everything a list or a download needs is set. */
export type AvailableDocument = StoredDocument & Required<Pick<StoredDocument, 'type' | 'size' | 'received_at' | 'object_key'>>;

export function isAvailable(document: StoredDocument): document is AvailableDocument {
  return document.status === 'available' && document.object_key !== undefined;
}

/** `yyyy-mm-dd` of an instant, in UTC. */
export function utcDate(instant: string): string {
  return instant.slice(0, 10);
}

export function documentObjectKey(organizationId: string, documentId: string): string {
  return `${DOCUMENT_OBJECT_PREFIX}${organizationId}/${documentId}`;
}

/**
 * Where an upload session's file is kept once checked: a copy of one version
 * of the upload (`tag`), under a key no client can write, so what is checked
 * and what is kept are the same bytes whatever is posted to the form later.
 */
export function checkedUploadObjectKey(organizationId: string, documentId: string, tag: string): string {
  return `${documentObjectKey(organizationId, documentId)}/${tag.replace(/[^A-Za-z0-9-]/g, '')}`;
}

export function uploadObjectKey(organizationId: string, documentId: string): string {
  return `${UPLOAD_OBJECT_PREFIX}${organizationId}/${documentId}`;
}

/** The organization and document an upload key names, or undefined for any other key. */
export function parseUploadObjectKey(key: string): { organizationId: string; documentId: string } | undefined {
  if (!key.startsWith(UPLOAD_OBJECT_PREFIX)) return undefined;
  const match = /^(org_[A-Za-z0-9_-]+)\/(doc_[A-Za-z0-9]+)$/.exec(key.slice(UPLOAD_OBJECT_PREFIX.length));
  return match?.[1] && match[2] ? { organizationId: match[1], documentId: match[2] } : undefined;
}

/** The JSON part of an upload holds three short members; anything bigger is not one. */
export const MAX_METADATA_BYTES = 16 * 1024;
