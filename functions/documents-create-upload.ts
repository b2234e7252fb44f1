import { documentDeps } from '#shared/wiring/documents.ts';
import { documentView } from '#shared/http/documents.ts';
import { createUploadSession } from '#shared/domain/documents/upload-session.ts';
import type { UploadSession } from '#shared/domain/documents/upload-session.ts';
import { pathParams } from '#shared/http/request.ts';
import { idempotentApiHandler } from '#shared/http/idempotency.ts';
import { documentUrl } from '#shared/http/links.ts';
import { created } from '#shared/http/response.ts';

/**
 * POST .../documents/uploads: a pending document and a presigned S3 POST for
 * files up to 8,000,000 bytes; the documents-finalize function takes it from there.
 */
export const handler = idempotentApiHandler('documents-create-upload', async (request, { completion }) => {
  const { organization_id: organizationId } = pathParams(request, 'organization_id');
  const answer = (session: UploadSession) => created({ ...documentView(session.document), upload: session.upload }, { self: documentUrl(request, organizationId, session.document.document_id) });
  return answer(await createUploadSession({ organizationId, body: request.body, completion: completion(answer) }, documentDeps()));
});
