import { documentDeps } from '#shared/wiring/documents.ts';
import { documentDownloadUrl } from '#shared/domain/documents/read-documents.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { redirect } from '#shared/http/response.ts';

const deps = documentDeps();

/** GET .../documents/{document_id}/file: 302 to a presigned URL valid for five minutes; the bytes never pass through Lambda. */
export const handler = apiHandler('documents-download', async (request) => {
  const { organization_id: organizationId, document_id: documentId } = request.pathParameters as Record<'organization_id' | 'document_id', string>;
  return redirect(await documentDownloadUrl(organizationId, documentId, deps));
});
