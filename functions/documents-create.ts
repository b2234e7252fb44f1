import { documentDeps } from '#shared/wiring/documents.ts';
import { createDocument } from '#shared/domain/documents/create-document.ts';
import { MAX_FILE_BYTES, MAX_METADATA_BYTES } from '#shared/domain/documents/document.ts';
import type { AvailableDocument } from '#shared/domain/documents/document.ts';
import { documentView } from '#shared/http/documents.ts';
import { pathParams, withoutPathEchoes } from '#shared/http/request.ts';
import { recordBusinessMetric } from '#shared/observability/metrics.ts';
import { idempotentApiHandler } from '#shared/http/idempotency.ts';
import { documentUrl } from '#shared/http/links.ts';
import { parseMultipartUpload } from '#shared/http/multipart.ts';
import { created } from '#shared/http/response.ts';

/**
 * POST /v3/organizations/{organization_id}/documents: the JSON part and the
 * file in one multipart request. Requests bigger than the Lambda payload cap
 * never get here (413 from the gateway, naming the upload-session route).
 */
export const handler = idempotentApiHandler('documents-create', async (request, { completion }) => {
  const { organization_id: organizationId } = pathParams(request, 'organization_id');
  const upload = await parseMultipartUpload(request.headers['content-type'], request.rawBody, {
    maxFileBytes: MAX_FILE_BYTES,
    maxJsonBytes: MAX_METADATA_BYTES,
  });
  const answer = (document: AvailableDocument) => created(documentView(document), { self: documentUrl(request, organizationId, document.document_id) });
  const metadata = withoutPathEchoes(upload.metadata, request.pathParameters);
  const document = await createDocument({ organizationId, metadata, file: upload.file, completion: completion(answer) }, documentDeps());
  recordBusinessMetric('DocumentsStored', 1, { document_type: document.type });
  return answer(document);
});
