import type * as z from 'zod/mini';
import type { AvailableDocument, DocumentStatus, StoredDocument } from '#shared/domain/documents/document.ts';
import { DOCUMENT_RESOURCES, DOCUMENT_TYPES, scanStatusOf, utcDate } from '#shared/domain/documents/document.ts';
import type { FilterSpec } from './list-query.ts';
import type { documentListViewSchema, documentViewSchema } from './schemas/documents.ts';

/**
 * How documents look on the wire. The views' return types are inferred from
 * their schemas (schemas/documents.ts), which describe them in the OpenAPI
 * document; the schemas live apart so that handlers do not bundle zod.
 */

/** The document list's filters: the handler parses with them and the OpenAPI document lists them. */
export const DOCUMENT_LIST_FILTERS = {
  start_received_date: { kind: 'date', bound: 'start', range: 'received' },
  end_received_date: { kind: 'date', bound: 'end', range: 'received' },
  type: { kind: 'enum', values: DOCUMENT_TYPES },
  resource: { kind: 'enum', values: DOCUMENT_RESOURCES },
} as const satisfies Readonly<Record<string, FilterSpec>>;

export type DocumentListFilter = keyof typeof DOCUMENT_LIST_FILTERS;

/** The members a single-record response carries (the envelope adds `response` and `links`). */
export function documentView(document: StoredDocument): z.output<typeof documentViewSchema> {
  return {
    document_id: document.document_id,
    resource: document.resource,
    resource_id: document.resource_id,
    ...(document.type !== undefined ? { type: document.type } : {}),
    file: document.file,
    ...(document.description !== undefined ? { description: document.description } : {}),
    ...(document.size !== undefined ? { size: document.size } : {}),
    ...(document.received_at !== undefined ? { received_date: utcDate(document.received_at) } : {}),
    // Clients never see a `deleting` document: reads answer 404 for it (read-documents.ts isVisible).
    status: document.status as Exclude<DocumentStatus, 'deleting'>,
    ...(document.reason !== undefined ? { reason: document.reason } : {}),
    ...(document.status === 'available' ? evidenceView(document) : {}),
  };
}

/** What a stored file carries as evidence: its hash, its scan, its retention. */
function evidenceView(document: StoredDocument) {
  return {
    ...(document.sha256 !== undefined ? { sha256: document.sha256 } : {}),
    scan_status: scanStatusOf(document),
    ...(document.retain_until !== undefined ? { retain_until: document.retain_until } : {}),
    legal_hold: document.legal_hold === true,
  };
}

/** The members of one list result, as the spec lists them. */
export function documentListView(document: AvailableDocument): z.output<typeof documentListViewSchema> {
  return {
    document_id: document.document_id,
    resource: document.resource,
    resource_id: document.resource_id,
    type: document.type,
    ...(document.description !== undefined ? { description: document.description } : {}),
    size: document.size,
    received_date: utcDate(document.received_at),
    ...evidenceView(document),
  };
}
