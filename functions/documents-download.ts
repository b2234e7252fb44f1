import { documentDeps } from '#shared/wiring/documents.ts';
import { documentDownloadUrl } from '#shared/domain/documents/read-documents.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { pathParams } from '#shared/http/request.ts';
import { redirect } from '#shared/http/response.ts';

/** GET .../documents/{document_id}/file: 302 to a presigned URL valid for five minutes; the bytes never pass through Lambda. */
export const handler = apiHandler('documents-download', async (request) => {
  const { organization_id: organizationId, document_id: documentId } = pathParams(request, 'organization_id', 'document_id');
  return redirect(await documentDownloadUrl(organizationId, documentId, documentDeps()));
});
