import { describe, expect, it } from 'vitest';
import type { StoredDocument } from '#shared/domain/documents/document.ts';
import { isRetained, parseDocumentObjectKey, retentionRuleDate, scanStatusOf } from '#shared/domain/documents/document.ts';
import type { DocumentDeps, DocumentFiles, DocumentRepository } from '#shared/domain/documents/ports.ts';
import { VerdictTooEarly, recordScanResult } from '#shared/domain/documents/scan-result.ts';
import { classifyDocumentChange } from '#shared/domain/events/domain-events.ts';
import { EICAR, localVerdict } from '../../local/malware-scanner.ts';
import { ObjectLocks } from '../../local/s3-object-lock.ts';

const stored = (overrides: Partial<StoredDocument> = {}): StoredDocument => ({
  document_id: 'doc_1',
  organization_id: 'org_1',
  resource: 'dispute',
  resource_id: 'dsp_1',
  file: 'call.wav',
  status: 'available',
  type: 'wav',
  size: 10,
  received_at: '2026-01-02T03:04:05.000Z',
  object_key: 'documents/org_1/doc_1',
  sha256: 'a'.repeat(64),
  scan_status: 'pending',
  retain_until: '2028-01-02',
  legal_hold: false,
  created_at: '2026-01-02T03:04:05.000Z',
  ...overrides,
});

describe('retention', () => {
  it('keeps dispute audio two years from its received date, and nothing else', () => {
    expect(retentionRuleDate('dispute', 'mp3', '2026-11-28T23:59:59.000Z')).toBe('2028-11-28');
    expect(retentionRuleDate('dispute', 'wav', '2028-02-29T00:00:00.000Z')).toBe('2030-03-01');
    expect(retentionRuleDate('dispute', 'jpeg', '2026-11-28T00:00:00.000Z')).toBeUndefined();
    expect(retentionRuleDate('bankaccount', 'wav', '2026-11-28T00:00:00.000Z')).toBeUndefined();
  });

  it('retains through the retain_until day itself, and always on legal hold', () => {
    expect(isRetained({ retain_until: '2028-01-02' }, '2028-01-02')).toBe(true);
    expect(isRetained({ retain_until: '2028-01-02' }, '2028-01-03')).toBe(false);
    expect(isRetained({ legal_hold: true }, '2099-01-01')).toBe(true);
    expect(isRetained({}, '2026-01-01')).toBe(false);
  });
});

describe('scan status', () => {
  it('answers pending for a document stored before the gate', () => {
    expect(scanStatusOf(stored({ scan_status: undefined }))).toBe('pending');
  });

  it('names the document of a stored file key, and of a checked copy under it', () => {
    expect(parseDocumentObjectKey('documents/org_1/doc_1')).toEqual({ organizationId: 'org_1', documentId: 'doc_1' });
    expect(parseDocumentObjectKey('documents/org_1/doc_1/abc-123')).toEqual({ organizationId: 'org_1', documentId: 'doc_1' });
    expect(parseDocumentObjectKey('uploads/org_1/doc_1')).toBeUndefined();
    expect(parseDocumentObjectKey('malware-protection-resource-validation-object')).toBeUndefined();
  });

  it('announces the end of a scan once, with its verdict', () => {
    expect(classifyDocumentChange(stored(), stored({ scan_status: 'clean' }))).toBe('Document Scanned');
    expect(classifyDocumentChange(stored({ scan_status: 'clean' }), stored({ scan_status: 'clean', legal_hold: true }))).toBeUndefined();
    expect(classifyDocumentChange(undefined, stored())).toBe('Document Created');
  });

  function deps(record: StoredDocument | undefined, options: { storedKeys?: string[]; readBack?: StoredDocument } = {}) {
    const calls: string[] = [];
    const documents = {
      setScanStatus: async (_org: string, _doc: string, key: string, status: string) => {
        calls.push(`setScanStatus ${key} ${status}`);
        return record && record.status === 'available' && record.object_key === key ? { ...record, scan_status: status } : undefined;
      },
      get: async () => options.readBack ?? record,
    } as unknown as DocumentRepository;
    const files = {
      keysUnder: async (prefix: string) => (options.storedKeys ?? []).filter((key) => key.startsWith(prefix)),
      purge: async (key: string, version: string | undefined) => void calls.push(`purge ${key} ${version}`),
      retain: async (key: string, lock: { retainUntil?: string; legalHold: boolean }) => void calls.push(`retain ${key} ${lock.retainUntil} ${lock.legalHold}`),
    } as unknown as DocumentFiles;
    return { calls, deps: { documents, files } as DocumentDeps };
  }

  it('removes an infected version, locks a clean retained file, and fails unknown verdicts safe', async () => {
    const infected = deps(stored());
    expect(await recordScanResult({ objectKey: 'documents/org_1/doc_1', versionId: 'v1', scanResultStatus: 'THREATS_FOUND' }, infected.deps)).toEqual({ status: 'recorded', scanStatus: 'infected' });
    expect(infected.calls).toEqual(['setScanStatus documents/org_1/doc_1 infected', 'purge documents/org_1/doc_1 v1']);

    const clean = deps(stored());
    await recordScanResult({ objectKey: 'documents/org_1/doc_1', versionId: 'v1', scanResultStatus: 'NO_THREATS_FOUND' }, clean.deps);
    expect(clean.calls).toEqual(['setScanStatus documents/org_1/doc_1 clean', 'retain documents/org_1/doc_1 2028-01-02 false']);

    const unretained = deps(stored({ retain_until: undefined }));
    await recordScanResult({ objectKey: 'documents/org_1/doc_1', versionId: undefined, scanResultStatus: 'NO_THREATS_FOUND' }, unretained.deps);
    expect(unretained.calls).toEqual(['setScanStatus documents/org_1/doc_1 clean']);

    const odd = deps(stored());
    expect(await recordScanResult({ objectKey: 'documents/org_1/doc_1', versionId: undefined, scanResultStatus: 'SOMETHING_NEW' }, odd.deps)).toEqual({ status: 'recorded', scanStatus: 'failed' });

    // An infected copy no record keeps still goes.
    const unkept = deps(stored());
    expect(await recordScanResult({ objectKey: 'documents/org_1/doc_1/etag-2', versionId: 'v2', scanResultStatus: 'THREATS_FOUND' }, unkept.deps)).toEqual({ status: 'ignored' });
    expect(unkept.calls).toContain('purge documents/org_1/doc_1/etag-2 v2');
  });

  it('refuses a result that arrives before its record settles, so the retry records it; touches nothing meanwhile', async () => {
    const result = (scanResultStatus: string) => ({ objectKey: 'documents/org_1/doc_1', versionId: 'v1', scanResultStatus });
    const early = [
      // A delete flagged the record; a refused delete puts it back.
      ['being deleted (a refused delete puts it back)', deps(stored({ status: 'deleting' }))],
      // A session's finalizer copied the file and has not marked the record yet.
      ['still being checked', deps(stored({ status: 'pending', object_key: undefined }))],
      // A single-request upload stored the file and has not written the record yet.
      ['not written yet', deps(undefined, { storedKeys: ['documents/org_1/doc_1', 'documents/org_1/doc_1/etag-2'] })],
      // Put back between the refused write and the read.
      ['settled meanwhile', deps(stored({ status: 'deleting' }), { readBack: stored() })],
    ] as const;
    for (const [reason, { calls, deps: unsettled }] of early) {
      const refusal = recordScanResult(result('THREATS_FOUND'), unsettled);
      await expect(refusal).rejects.toBeInstanceOf(VerdictTooEarly);
      await expect(refusal).rejects.toThrow(`document doc_1 is ${reason}; its scan result for documents/org_1/doc_1 is retried`);
      // Nothing purged before the record says what the file is: the scan tag keeps it unserved meanwhile.
      expect(calls).toEqual(['setScanStatus documents/org_1/doc_1 infected']);
    }

    // No record and no file (deleted, or a create that failed and cleaned up): ignored, an infected version still purged.
    const gone = deps(undefined, { storedKeys: ['documents/org_1/doc_1/etag-2'] });
    expect(await recordScanResult(result('THREATS_FOUND'), gone.deps)).toEqual({ status: 'ignored' });
    expect(gone.calls).toEqual(['setScanStatus documents/org_1/doc_1 infected', 'purge documents/org_1/doc_1 v1']);
    // A rejected session never keeps the file.
    expect(await recordScanResult(result('NO_THREATS_FOUND'), deps(stored({ status: 'rejected' })).deps)).toEqual({ status: 'ignored' });
  });
});

describe('the local scanner and Object Lock', () => {
  it('reports the EICAR test file (and trailing white space) as infected, anything else clean', () => {
    expect(localVerdict(Buffer.from(EICAR, 'latin1'))).toBe('THREATS_FOUND');
    expect(localVerdict(Buffer.from(`${EICAR}\r\n  `, 'latin1'))).toBe('THREATS_FOUND');
    expect(localVerdict(Buffer.from(`${EICAR} and more text`, 'latin1'))).toBe('NO_THREATS_FOUND');
    expect(localVerdict(Buffer.from(`x${EICAR}`, 'latin1'))).toBe('NO_THREATS_FOUND');
    expect(localVerdict(Buffer.alloc(0))).toBe('NO_THREATS_FOUND');
  });

  it('refuses removal of a locked object and shortening its retention, unless governance is bypassed; a legal hold is never bypassed', () => {
    const locks = new ObjectLocks();
    const later = new Date(Date.now() + 86_400_000).toISOString();
    const sooner = new Date(Date.now() + 3_600_000).toISOString();
    locks.putRetention('b', 'k', `<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>${later}</RetainUntilDate></Retention>`, false);
    expect(() => locks.checkRemoval('b', 'k', false)).toThrow(/object lock/);
    expect(() => locks.checkRemoval('b', 'k', true)).not.toThrow();
    expect(() => locks.putRetention('b', 'k', `<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>${sooner}</RetainUntilDate></Retention>`, false)).toThrow(/object lock/);
    locks.putRetention('b', 'k', `<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>${sooner}</RetainUntilDate></Retention>`, true);
    locks.putLegalHold('b', 'k', '<LegalHold><Status>ON</Status></LegalHold>');
    expect(() => locks.checkRemoval('b', 'k', true)).toThrow(/object lock/);
    locks.putLegalHold('b', 'k', '<LegalHold><Status>OFF</Status></LegalHold>');
    expect(() => locks.putRetention('b', 'k', '<Retention><Mode>COMPLIANCE</Mode></Retention>', true)).toThrow(/XML/);
    expect(() => locks.checkRemoval('b', 'other', false)).not.toThrow();
  });
});
