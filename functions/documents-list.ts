import { documentRecordDeps } from '#shared/wiring/documents.ts';
import type { DocumentResource, DocumentType } from '#shared/domain/documents/document.ts';
import { documentListView } from '#shared/http/documents.ts';
import { listDocuments } from '#shared/domain/documents/read-documents.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { pathParams } from '#shared/http/request.ts';
import type { DocumentListFilter } from '#shared/http/documents.ts';
import { DOCUMENT_LIST_FILTERS } from '#shared/http/documents.ts';
import { documentsUrl } from '#shared/http/links.ts';
import type { ListQuerySpec } from '#shared/http/list-query.ts';
import { listLinks, listResponse, parseListQuery } from '#shared/http/list-query.ts';

const spec: ListQuerySpec<DocumentListFilter> = { filters: DOCUMENT_LIST_FILTERS };

/** GET /v3/organizations/{organization_id}/documents: available documents, newest first. */
export const handler = apiHandler('documents-list', async (request) => {
  const { organization_id: organizationId } = pathParams(request, 'organization_id');
  const { filters, pageSize, pageIndex, cursor } = parseListQuery(request.query, spec);
  const { type, resource, start_received_date: from, end_received_date: to } = filters as { type?: DocumentType; resource?: DocumentResource; start_received_date?: string; end_received_date?: string };
  const page = await listDocuments({ organizationId, type, resource, from, to, pageSize, pageIndex, cursor }, documentRecordDeps());
  const next = page.nextCursor ? { pageIndex: pageIndex + 1, cursor: page.nextCursor } : undefined;
  return listResponse({
    results: page.documents.map(documentListView),
    pageSize,
    pageIndex,
    homeOrganizationId: request.caller?.organizationId as string,
    resourceSpecific: filters as Record<string, string>,
    links: listLinks(documentsUrl(request, organizationId), request.query, next),
  });
});
