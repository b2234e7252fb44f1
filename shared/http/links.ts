import type { ApiRequest } from './request.ts';

/** Absolute `/v3/...` URL under the API root the request came through; segments are URL-encoded. */
export function apiUrl(request: Pick<ApiRequest, 'baseUrl'>, ...segments: string[]): string {
  return `${request.baseUrl}/v3/${segments.map(encodeURIComponent).join('/')}`;
}

export function documentsUrl(request: Pick<ApiRequest, 'baseUrl'>, organizationId: string): string {
  return apiUrl(request, 'organizations', organizationId, 'documents');
}

export function documentUrl(request: Pick<ApiRequest, 'baseUrl'>, organizationId: string, documentId: string): string {
  return apiUrl(request, 'organizations', organizationId, 'documents', documentId);
}
