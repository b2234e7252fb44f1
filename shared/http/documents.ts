import { DOCUMENT_RESOURCES, DOCUMENT_TYPES } from '#shared/domain/documents/document.ts';
import type { FilterSpec } from './list-query.ts';

/** The document list's filters: the handler parses with them and the OpenAPI document lists them. */
export const DOCUMENT_LIST_FILTERS = {
  start_received_date: { kind: 'date', bound: 'start', range: 'received' },
  end_received_date: { kind: 'date', bound: 'end', range: 'received' },
  type: { kind: 'enum', values: DOCUMENT_TYPES },
  resource: { kind: 'enum', values: DOCUMENT_RESOURCES },
} as const satisfies Readonly<Record<string, FilterSpec>>;

export type DocumentListFilter = keyof typeof DOCUMENT_LIST_FILTERS;
