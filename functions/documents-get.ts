import { documentRecordDeps } from '#shared/aws/document-deps.ts';
import { documentView } from '#shared/domain/documents/document.ts';
import { getDocument } from '#shared/domain/documents/read-documents.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { documentUrl } from '#shared/http/links.ts';
import { fetched } from '#shared/http/response.ts';

const deps = documentRecordDeps();

/** GET /v3/organizations/{organization_id}/documents/{document_id}: the record, with its status. */
export const handler = apiHandler('documents-get', async (request) => {
  const { organization_id: organizationId, document_id: documentId } = request.pathParameters as Record<'organization_id' | 'document_id', string>;
  const document = await getDocument(organizationId, documentId, deps);
  return fetched(documentView(document), { self: documentUrl(request, organizationId, documentId) });
});
