import { Conflict, NotFound, OutcomeUnknown, Unavailable } from '../errors.ts';
import { documentObjectKey, uploadObjectKey, utcDate } from './document.ts';
import type { DocumentDeps } from './ports.ts';
import { isVisible } from './read-documents.ts';

/**
 * Deletes record and file so that no failure leaves a half-deleted document:
 * 1. flag the record `deleting` (conditional; it leaves every list at once),
 * 2. delete the file(s). If the store refused (nothing deleted), the record
 *    is put back as it was, so the document stays whole and retrievable; if
 *    the delete may have landed (a timeout, a lost answer), the record stays
 *    flagged, answering 404, never an available record without its file;
 *    either way the request fails with the cause,
 * 3. delete the record, freeing its hash; if that fails the document already
 *    answers 404 and a retried DELETE (which finds it flagged) completes the job.
 * A document on legal hold or retained past today is refused in step 1, by
 * the same conditional write, and nothing is removed.
 */
export async function deleteDocument(organizationId: string, documentId: string, deps: DocumentDeps): Promise<void> {
  const now = deps.clock?.() ?? new Date();
  const previous = await deps.documents.markDeleting(organizationId, documentId, utcDate(now.toISOString()));
  if (!previous) throw new NotFound(`no document ${documentId}`);
  if (previous === 'retained') {
    const document = await deps.documents.get(organizationId, documentId);
    throw new Conflict('RETENTION_ACTIVE', document?.legal_hold ? `document ${documentId} is on legal hold` : `document ${documentId} is retained until ${document?.retain_until ?? 'a later date'}`);
  }
  // Every copy goes, not only the file the record keeps: the finalizer's checked copies sit under
  // documents/<org>/<doc>/<etag>, one per version of the upload, and a run that failed after copying leaves its copy
  // there for good once a later version is kept. A session's file may also still sit under its upload key.
  try {
    const kept = previous.status === 'available' ? previous.object_key : undefined;
    const copies = (await deps.files.keysUnder(`${documentObjectKey(organizationId, documentId)}/`)).filter((key) => key !== kept);
    // The kept file last: a delete refused before it puts back a document whose file is still there.
    const keys = [...copies, ...(kept ? [kept] : [documentObjectKey(organizationId, documentId), uploadObjectKey(organizationId, documentId)])];
    for (const key of keys) await deps.files.delete(key);
  } catch (error) {
    if (!(error instanceof OutcomeUnknown)) {
      if (previous.status !== 'deleting') await deps.documents.restore(previous).catch(() => undefined);
      throw error;
    }
    // OUTCOME_UNKNOWN, but not the create's "retry with the same Idempotency-Key": a retried DELETE finds the record flagged and finishes.
    throw new Unavailable('the file may already be deleted; retry the DELETE to finish it', 1, { cause: error, code: 'OUTCOME_UNKNOWN' });
  }
  await deps.documents.remove(previous);
  // An expired session was already invisible: it is cleaned up, but it did not exist for the client.
  if (previous.status !== 'deleting' && !isVisible(previous, now)) throw new NotFound(`no document ${documentId}`);
}
