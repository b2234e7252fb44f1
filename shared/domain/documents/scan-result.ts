/**
 * The end of a malware scan of a stored file (GuardDuty Malware Protection for
 * S3 in AWS, the local scanner in `npm start`; both deliver the same event).
 * The verdict goes on the record that keeps the file; an infected file's bytes
 * are removed for good (the record stays, as evidence of the attempt); a clean
 * file that a rule or a hold retains is locked. Scan results arrive at least
 * once and may repeat: every step can run again.
 *
 * A verdict can also arrive early, while the record that will keep the file
 * is still changing: a single-request upload stores the file before its
 * record, a session's finalizer copies the file before it marks the record
 * available, and a delete flags the record before it removes the file (and
 * puts it back if the store refuses). Dropped then, the verdict would be lost
 * for good and the document stay `pending`, never served. So it is refused
 * with `VerdictTooEarly` and the invocation's retry (Lambda's asynchronous
 * retries in AWS, the local scanner's in `npm start`) records it once the
 * record has settled; until then the file's scan tag keeps it unserved.
 */
import type { ScanStatus } from './document.ts';
import { parseDocumentObjectKey } from './document.ts';
import type { DocumentDeps } from './ports.ts';
import { lockFile } from './update-document.ts';

/** GuardDuty's scanResultStatus values and the scan status each means. */
export const SCAN_RESULT_STATUSES: Readonly<Record<string, Exclude<ScanStatus, 'pending'>>> = {
  NO_THREATS_FOUND: 'clean',
  THREATS_FOUND: 'infected',
  UNSUPPORTED: 'failed',
  ACCESS_DENIED: 'failed',
  FAILED: 'failed',
};

export interface ScanResult {
  objectKey: string;
  /** The scanned version (a versioned bucket keeps a removed object's versions; this one must go). */
  versionId: string | undefined;
  /** As GuardDuty reports it. */
  scanResultStatus: string;
}

export type ScanOutcome = { status: 'recorded'; scanStatus: Exclude<ScanStatus, 'pending'> } | { status: 'ignored' };

/** The record that may keep the scanned file is between two states; the same verdict succeeds on a retry. */
export class VerdictTooEarly extends Error {
  override readonly name = 'VerdictTooEarly';
}

export async function recordScanResult(result: ScanResult, deps: DocumentDeps): Promise<ScanOutcome> {
  const names = parseDocumentObjectKey(result.objectKey);
  // Anything unknown fails safe: not served.
  const scanStatus = SCAN_RESULT_STATUSES[result.scanResultStatus] ?? 'failed';
  if (!names) return { status: 'ignored' };
  const updated = await deps.documents.setScanStatus(names.organizationId, names.documentId, result.objectKey, scanStatus);
  const waitingFor = updated ? undefined : await unsettled(names.organizationId, names.documentId, result.objectKey, deps);
  if (waitingFor) throw new VerdictTooEarly(`document ${names.documentId} is ${waitingFor}; its scan result for ${result.objectKey} is retried`);
  // Infected bytes go whether or not a record keeps them (a copy the finalizer did not keep, a document deleted meanwhile).
  if (scanStatus === 'infected') await deps.files.purge(result.objectKey, result.versionId);
  if (!updated) return { status: 'ignored' };
  if (scanStatus === 'clean' && (updated.retain_until !== undefined || updated.legal_hold === true)) await lockFile(updated, deps);
  return { status: 'recorded', scanStatus };
}

/**
 * Why a record that does not take the verdict may still come to keep the file
 * (then the verdict must wait), or undefined when it never will: a record that
 * keeps another file, a rejected one, or no record and no file.
 */
async function unsettled(organizationId: string, documentId: string, objectKey: string, deps: DocumentDeps): Promise<string | undefined> {
  const document = await deps.documents.get(organizationId, documentId);
  // Settled between the write and this read (a delete put it back, a check ended): the retry's write takes.
  if (document?.status === 'available' && document.object_key === objectKey) return 'settled meanwhile';
  if (document?.status === 'deleting') return 'being deleted (a refused delete puts it back)';
  if (document?.status === 'pending') return 'still being checked';
  // A single-request upload stores its file first: a file without a record is a create still writing it. Should
  // that create fail and its clean-up fail too, the retries run out and the result waits in the dead-letter queue.
  // Listed, not read: the bucket refuses a read of a file whose scan tag is not clean, even to this function.
  if (!document && (await deps.files.keysUnder(objectKey)).includes(objectKey)) return 'not written yet';
  return undefined;
}
