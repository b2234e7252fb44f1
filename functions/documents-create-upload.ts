import { documentDeps } from '#shared/aws/document-deps.ts';
import { documentView } from '#shared/domain/documents/document.ts';
import { createUploadSession } from '#shared/domain/documents/upload-session.ts';
import type { UploadSession } from '#shared/domain/documents/upload-session.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { idempotent } from '#shared/http/idempotency.ts';
import { idempotencyStore } from '#shared/wiring/idempotency.ts';
import { documentUrl } from '#shared/http/links.ts';
import { created } from '#shared/http/response.ts';

const deps = documentDeps();

const NAME = 'documents-create-upload';

/**
 * POST .../documents/uploads: a pending document and a presigned S3 POST for
 * files up to 8,000,000 bytes; the documents-finalize function takes it from there.
 */
export const handler = apiHandler(NAME, idempotent(NAME, async (request, { completion }) => {
  const organizationId = request.pathParameters.organization_id as string;
  const answer = (session: UploadSession) => created({ ...documentView(session.document), upload: session.upload }, { self: documentUrl(request, organizationId, session.document.document_id) });
  return answer(await createUploadSession({ organizationId, body: request.body, completion: completion(answer) }, deps));
}, idempotencyStore));
