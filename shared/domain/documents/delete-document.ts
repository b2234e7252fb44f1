import { NotFound } from '../errors.ts';
import { documentObjectKey, uploadObjectKey } from './document.ts';
import type { DocumentDeps } from './ports.ts';
import { isVisible } from './read-documents.ts';

/**
 * Deletes record and file so that no failure leaves a half-deleted document:
 * 1. flag the record `deleting` (conditional; it leaves every list at once),
 * 2. delete the file(s). If that fails, the file decides: still stored, the
 *    record is put back as it was, so the document stays whole and
 *    retrievable, and the cause fails the request; gone (the delete landed
 *    and only its answer was lost), the delete goes on; unknown (the check
 *    fails too), the record stays flagged, answering 404, and the cause fails
 *    the request,
 * 3. delete the record; if that fails the document already answers 404 and a
 *    retried DELETE (which finds it flagged) completes the job.
 */
export async function deleteDocument(organizationId: string, documentId: string, deps: DocumentDeps): Promise<void> {
  const previous = await deps.documents.markDeleting(organizationId, documentId);
  if (!previous) throw new NotFound(`no document ${documentId}`);
  // A session's file may sit under its upload key, or be mid-way through the finalizer's copy: remove both.
  const keys = previous.status === 'available' && previous.object_key ? [previous.object_key] : [documentObjectKey(organizationId, documentId), uploadObjectKey(organizationId, documentId)];
  try {
    for (const key of keys) await deps.files.delete(key);
  } catch (error) {
    if (previous.status === 'deleting') throw error;
    // A session's record is put back whatever its upload keys hold: it names no stored file yet.
    const file = previous.status === 'available' && previous.object_key ? await deps.files.head(previous.object_key).then((facts) => (facts ? 'stored' : 'gone'), () => 'unknown') : 'stored';
    if (file === 'stored') await deps.documents.restore(previous).catch(() => undefined);
    if (file !== 'gone') throw error;
  }
  await deps.documents.remove(organizationId, documentId);
  // An expired session was already invisible: it is cleaned up, but it did not exist for the client.
  if (previous.status !== 'deleting' && !isVisible(previous, deps.clock?.() ?? new Date())) throw new NotFound(`no document ${documentId}`);
}
