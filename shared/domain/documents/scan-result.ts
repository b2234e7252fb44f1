/**
 * The end of a malware scan of a stored file (GuardDuty Malware Protection for
 * S3 in AWS, the local scanner in `npm start`; both deliver the same event).
 * The verdict goes on the record that keeps the file; an infected file's bytes
 * are removed for good (the record stays, as evidence of the attempt); a clean
 * file that a rule or a hold retains is locked. Scan results arrive at least
 * once and may repeat: every step can run again.
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

export async function recordScanResult(result: ScanResult, deps: DocumentDeps): Promise<ScanOutcome> {
  const names = parseDocumentObjectKey(result.objectKey);
  // Anything unknown fails safe: not served.
  const scanStatus = SCAN_RESULT_STATUSES[result.scanResultStatus] ?? 'failed';
  if (!names) return { status: 'ignored' };
  const updated = await deps.documents.setScanStatus(names.organizationId, names.documentId, result.objectKey, scanStatus);
  // Infected bytes go whether or not a record keeps them (a copy the finalizer did not keep, a document deleted meanwhile).
  if (scanStatus === 'infected') await deps.files.purge(result.objectKey, result.versionId);
  if (!updated) return { status: 'ignored' };
  if (scanStatus === 'clean' && (updated.retain_until !== undefined || updated.legal_hold === true)) await lockFile(updated, deps);
  return { status: 'recorded', scanStatus };
}
