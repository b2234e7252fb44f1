/**
 * PUT .../documents/doc_<id>: the evidence members only. A legal hold can be
 * set and released; a retention date can be extended, never shortened (an
 * earlier date than the one kept is 400). The record is written first (it is
 * what every answer and the DELETE check read), then the stored file's lock
 * follows, once the scan found it clean (the scan result sets the lock of a
 * file scanned later, from the record as it then is). A failed lock write
 * fails the request; repeating the PUT applies it again.
 */
import * as z from 'zod/mini';
import { Conflict, InvalidRequest, NotFound } from '../errors.ts';
import { parseWith } from '../validation.ts';
import type { StoredDocument } from './document.ts';
import { isAvailable, utcDate } from './document.ts';
import type { DocumentDeps } from './ports.ts';
import { getDocument } from './read-documents.ts';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export const documentUpdateSchema = z
  .strictObject({
    legal_hold: z.optional(z.boolean({ error: 'must be true or false' }).check(z.meta({ description: 'While true the document cannot be deleted, whatever its retain_until.' }))),
    retain_until: z.optional(
      z.string({ error: 'must be a date, yyyy-mm-dd' }).check(
        z.refine(isCalendarDate, { error: 'must be a date, yyyy-mm-dd' }),
        z.meta({ format: 'date', description: 'Keep the document until this date (UTC). It can be extended, never shortened.' }),
      ),
    ),
  })
  .check(z.meta({ description: 'Only these two members; at least one. Members whose value is null are treated as absent.' }));

/** `yyyy-mm-dd` naming a day that exists (not 2026-02-30). */
function isCalendarDate(text: string): boolean {
  const time = Date.parse(`${text}T00:00:00.000Z`);
  return DATE.test(text) && !Number.isNaN(time) && new Date(time).toISOString().slice(0, 10) === text;
}

export type DocumentUpdate = z.output<typeof documentUpdateSchema>;

/** The retention and legal hold after `body`, or 400 naming every failing member. */
export async function updateDocumentRetention(organizationId: string, documentId: string, body: unknown, deps: DocumentDeps): Promise<StoredDocument> {
  const parsed = parseWith(documentUpdateSchema, body);
  if (parsed.value === undefined) throw new InvalidRequest(parsed.issues);
  const change = parsed.value;
  if (change.legal_hold === undefined && change.retain_until === undefined) {
    throw new InvalidRequest([{ field: 'legal_hold', message: 'or retain_until is required' }]);
  }
  const today = utcDate((deps.clock?.() ?? new Date()).toISOString());
  const previous = await getDocument(organizationId, documentId, deps);
  if (!isAvailable(previous)) throw new Conflict('DOCUMENT_NOT_AVAILABLE', `document ${documentId} has no stored file to retain (status ${previous.status})`);
  if (change.retain_until !== undefined) {
    if (previous.retain_until !== undefined && change.retain_until < previous.retain_until) {
      throw new InvalidRequest([{ field: 'retain_until', message: `must not be earlier than the current retain_until (${previous.retain_until}): retention can be extended, never shortened` }]);
    }
    if (change.retain_until < today) throw new InvalidRequest([{ field: 'retain_until', message: 'must not be in the past' }]);
  }
  const updated = await deps.documents.setRetention(previous, change);
  // Changed by another request between the read and the write (or deleted): its answer stands, this one is refused.
  if (!updated) {
    if (!(await deps.documents.get(organizationId, documentId))) throw new NotFound(`no document ${documentId}`);
    throw new Conflict('CONCURRENT_MODIFICATION', `document ${documentId} was changed by another request; retry`);
  }
  if (isAvailable(updated) && updated.scan_status === 'clean') await lockFile(updated, deps);
  return updated;
}

/** The stored file's Object Lock, as the record says. */
export async function lockFile(document: StoredDocument, deps: Pick<DocumentDeps, 'files'>): Promise<void> {
  if (document.object_key === undefined) return;
  await deps.files.retain(document.object_key, {
    ...(document.retain_until !== undefined ? { retainUntil: document.retain_until } : {}),
    legalHold: document.legal_hold === true,
  });
}
