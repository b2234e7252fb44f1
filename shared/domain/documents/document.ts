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

/**
 * The malware scan of the stored file: `pending` until the scanner reports,
 * then `clean`, `infected` (the bytes are removed, the record stays as
 * evidence) or `failed` (the scanner could not decide). Only `clean` files are
 * served.
 */
export const SCAN_STATUSES = ['pending', 'clean', 'infected', 'failed'] as const;
export type ScanStatus = (typeof SCAN_STATUSES)[number];

/** How long a retained document is kept: eCheck telephone authorizations (dispute audio), two years under NACHA rules. */
export const RETENTION_YEARS = 2;
/** The document types a rule retains, per resource. */
export const RETAINED_TYPES: Readonly<Partial<Record<DocumentResource, readonly DocumentType[]>>> = { dispute: ['wav', 'mp3'] };

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
  /** Lowercase hex SHA-256 of the stored bytes, hashed while they streamed in; absent on documents stored before it was kept. */
  sha256?: string;
  /** The SHA-256 an upload session's client declared; the posted file must have it. */
  declared_sha256?: string;
  /** Absent on documents stored before the scan gate existed (docs/documents.md says what they answer). */
  scan_status?: ScanStatus;
  /** `yyyy-mm-dd`: the file may not be removed before this date (a retention rule, or a later date set by PUT). */
  retain_until?: string;
  /** While true the file may not be removed, whatever the date. */
  legal_hold?: boolean;
  created_at: string;
}

/** An available document: everything a list or a download needs is set. */
export type AvailableDocument = StoredDocument & Required<Pick<StoredDocument, 'type' | 'size' | 'received_at' | 'object_key'>>;

export function isAvailable(document: StoredDocument): document is AvailableDocument {
  return document.status === 'available' && document.object_key !== undefined;
}

/** The date a retention rule keeps a document until, or undefined when no rule keeps it. */
export function retentionRuleDate(resource: DocumentResource, type: DocumentType, receivedAt: string): string | undefined {
  if (!RETAINED_TYPES[resource]?.includes(type)) return undefined;
  const until = new Date(`${utcDate(receivedAt)}T00:00:00.000Z`);
  // 29 February plus two years is 1 March: never a day early.
  until.setUTCFullYear(until.getUTCFullYear() + RETENTION_YEARS);
  return utcDate(until.toISOString());
}

/** Whether the document may not be removed on `today` (`yyyy-mm-dd`, UTC): on legal hold, or retained past today. */
export function isRetained(document: Pick<StoredDocument, 'legal_hold' | 'retain_until'>, today: string): boolean {
  return document.legal_hold === true || (document.retain_until !== undefined && document.retain_until >= today);
}

/**
 * The scan status a document answers with. A document stored before the scan
 * gate existed has none; its file carries no scan tag, so the bucket refuses
 * to serve it until it is scanned (docs/operations.md, "Scanning documents
 * stored before the gate"): it answers `pending` until then.
 */
export function scanStatusOf(document: StoredDocument): ScanStatus {
  return document.scan_status ?? 'pending';
}

/** `yyyy-mm-dd` of an instant, in UTC. */
export function utcDate(instant: string): string {
  return instant.slice(0, 10);
}

/** The organization and document a stored file's key names (`documents/<org>/<doc>` or a checked copy under it). */
export function parseDocumentObjectKey(key: string): { organizationId: string; documentId: string } | undefined {
  if (!key.startsWith(DOCUMENT_OBJECT_PREFIX)) return undefined;
  const match = /^(org_[A-Za-z0-9_-]+)\/(doc_[A-Za-z0-9]+)(?:\/[A-Za-z0-9-]+)?$/.exec(key.slice(DOCUMENT_OBJECT_PREFIX.length));
  return match?.[1] && match[2] ? { organizationId: match[1], documentId: match[2] } : undefined;
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
