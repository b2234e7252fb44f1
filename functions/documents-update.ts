import { documentDeps } from '#shared/wiring/documents.ts';
import { updateDocumentRetention } from '#shared/domain/documents/update-document.ts';
import { documentView } from '#shared/http/documents.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { pathParams } from '#shared/http/request.ts';
import { documentUrl } from '#shared/http/links.ts';
import { updated } from '#shared/http/response.ts';

/** PUT .../documents/{document_id}: legal_hold and a later retain_until, nothing else. */
export const handler = apiHandler('documents-update', async (request) => {
  const { organization_id: organizationId, document_id: documentId } = pathParams(request, 'organization_id', 'document_id');
  const document = await updateDocumentRetention(organizationId, documentId, request.body ?? {}, documentDeps());
  return updated(documentView(document), { self: documentUrl(request, organizationId, documentId) });
});
