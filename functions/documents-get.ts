import { documentRecordDeps } from '#shared/wiring/documents.ts';
import { documentView } from '#shared/http/documents.ts';
import { getDocument } from '#shared/domain/documents/read-documents.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { pathParams } from '#shared/http/request.ts';
import { documentUrl } from '#shared/http/links.ts';
import { fetched } from '#shared/http/response.ts';

/** GET /v3/organizations/{organization_id}/documents/{document_id}: the record, with its status. */
export const handler = apiHandler('documents-get', async (request) => {
  const { organization_id: organizationId, document_id: documentId } = pathParams(request, 'organization_id', 'document_id');
  const document = await getDocument(organizationId, documentId, documentRecordDeps());
  return fetched(documentView(document), { self: documentUrl(request, organizationId, documentId) });
});
