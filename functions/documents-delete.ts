import { documentDeps } from '#shared/wiring/documents.ts';
import { deleteDocument } from '#shared/domain/documents/delete-document.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { pathParams } from '#shared/http/request.ts';
import { deleted } from '#shared/http/response.ts';

/** DELETE .../documents/{document_id}: record and file; a failed attempt is safe to retry. */
export const handler = apiHandler('documents-delete', async (request) => {
  const { organization_id: organizationId, document_id: documentId } = pathParams(request, 'organization_id', 'document_id');
  await deleteDocument(organizationId, documentId, documentDeps());
  return deleted({ document_id: documentId });
});
