/**
 * The finalizer against in-memory ports that fail on demand: after any
 * failure the S3 retry (the same call again) must end in the same state as a
 * clean run, with no object left behind.
 */
import { describe, expect, it } from 'vitest';
import type { AvailableDocument, StoredDocument } from '#shared/domain/documents/document.ts';
import { documentObjectKey, uploadObjectKey } from '#shared/domain/documents/document.ts';
import type { DocumentFiles, DocumentRepository } from '#shared/domain/documents/ports.ts';
import { finalizeUpload } from '#shared/domain/documents/upload-session.ts';
import { png } from '../fixtures/documents.ts';

class Faults {
  private readonly armed = new Set<string>();
  arm(...names: string[]) {
    for (const name of names) this.armed.add(name);
  }
  check(name: string) {
    if (this.armed.delete(name)) throw Object.assign(new Error(`${name} failed (injected)`), { name: 'ServiceUnavailable' });
  }
}

class MemoryFiles implements DocumentFiles {
  readonly objects = new Map<string, { bytes: Uint8Array; contentType: string | undefined }>();
  constructor(private readonly faults: Faults) {}
  async put(key: string, bytes: Uint8Array, contentType: string) {
    this.faults.check('put');
    this.objects.set(key, { bytes, contentType });
  }
  async delete(key: string) {
    this.faults.check('delete');
    this.objects.delete(key);
  }
  async head(key: string) {
    this.faults.check('head');
    const object = this.objects.get(key);
    return object ? { size: object.bytes.length, contentType: object.contentType } : undefined;
  }
  async readStart(key: string, length: number) {
    this.faults.check('readStart');
    return (this.objects.get(key)?.bytes ?? new Uint8Array()).subarray(0, length);
  }
  async read(key: string): Promise<AsyncIterable<Uint8Array>> {
    this.faults.check('read');
    const bytes = this.objects.get(key)?.bytes ?? new Uint8Array();
    return (async function* () {
      yield bytes;
    })();
  }
  async copy(fromKey: string, toKey: string, contentType: string) {
    this.faults.check('copy');
    const object = this.objects.get(fromKey);
    if (!object) throw Object.assign(new Error('NoSuchKey'), { name: 'NoSuchKey' });
    this.objects.set(toKey, { bytes: object.bytes, contentType });
  }
  async downloadUrl(): Promise<string> {
    throw new Error('not used');
  }
  async uploadForm(): Promise<{ url: string; fields: Record<string, string> }> {
    throw new Error('not used');
  }
}

class MemoryDocuments implements DocumentRepository {
  readonly records = new Map<string, StoredDocument>();
  constructor(private readonly faults: Faults) {}
  async put(document: StoredDocument) {
    this.records.set(document.document_id, { ...document });
  }
  async get(_organizationId: string, documentId: string) {
    this.faults.check('get');
    const record = this.records.get(documentId);
    return record ? { ...record } : undefined;
  }
  async markAvailable(document: AvailableDocument) {
    this.faults.check('markAvailable');
    const record = this.records.get(document.document_id);
    if (record?.status !== 'pending') return false;
    const { upload_key: _uploadKey, upload_expires_at: _expires, ...rest } = document;
    this.records.set(document.document_id, rest);
    return true;
  }
  async markRejected(_organizationId: string, documentId: string, reason: string) {
    this.faults.check('markRejected');
    const record = this.records.get(documentId);
    if (record?.status !== 'pending') return false;
    this.records.set(documentId, { ...record, status: 'rejected', reason });
    return true;
  }
  async remove(_organizationId: string, documentId: string) {
    this.records.delete(documentId);
  }
  async markDeleting(): Promise<StoredDocument | undefined> {
    throw new Error('not used');
  }
  async restore(): Promise<void> {
    throw new Error('not used');
  }
  async list(): Promise<never> {
    throw new Error('not used');
  }
}

const ORG = 'org_1';
const DOC = 'doc_0123456789abcdefghijkl';
const uploadKey = uploadObjectKey(ORG, DOC);
const finalKey = documentObjectKey(ORG, DOC);

function setup(fileName: string, bytes: Uint8Array) {
  const faults = new Faults();
  const files = new MemoryFiles(faults);
  const documents = new MemoryDocuments(faults);
  documents.records.set(DOC, {
    document_id: DOC,
    organization_id: ORG,
    resource: 'application',
    resource_id: 'app_1',
    file: fileName,
    status: 'pending',
    upload_key: uploadKey,
    upload_expires_at: new Date(Date.now() + 60_000).toISOString(),
    created_at: new Date().toISOString(),
  });
  files.objects.set(uploadKey, { bytes, contentType: 'binary/octet-stream' });
  const deps = { files, documents, clock: () => new Date('2026-01-02T03:04:05.678Z') };
  return { faults, files, documents, run: () => finalizeUpload(uploadKey, deps) };
}

describe('finalizer under failures', () => {
  it.each(['get', 'head', 'readStart', 'copy', 'markAvailable', 'delete'])('recovers when %s fails once: available, one object, no upload left', async (step) => {
    const { faults, files, documents, run } = setup('a.png', png);
    faults.arm(step);
    await expect(run()).rejects.toThrow('injected');
    expect(documents.records.get(DOC)?.status).toBe(step === 'delete' ? 'available' : 'pending');
    await run();
    expect(documents.records.get(DOC)).toMatchObject({ status: 'available', type: 'png', size: png.length, object_key: finalKey, received_at: '2026-01-02T03:04:05.678Z' });
    expect(documents.records.get(DOC)).not.toHaveProperty('upload_key');
    expect([...files.objects.keys()]).toEqual([finalKey]);
    // A third delivery of the same event changes nothing.
    expect(await run()).toEqual({ status: 'ignored' });
    expect([...files.objects.keys()]).toEqual([finalKey]);
  });

  it.each(['markRejected', 'delete'])('recovers when %s fails while rejecting: rejected, no object at all', async (step) => {
    const { faults, files, documents, run } = setup('a.jpg', png);
    faults.arm(step);
    await expect(run()).rejects.toThrow('injected');
    await run();
    expect(documents.records.get(DOC)).toMatchObject({ status: 'rejected', reason: expect.stringContaining('content is png') });
    expect([...files.objects.keys()]).toEqual([]);
  });

  it('drops its copy when the document is deleted while it copies', async () => {
    const { files, documents, run } = setup('a.png', png);
    const copy = files.copy.bind(files);
    files.copy = async (from, to, contentType) => {
      await copy(from, to, contentType);
      documents.records.delete(DOC);
    };
    expect(await run()).toEqual({ status: 'ignored' });
    expect([...files.objects.keys()]).toEqual([]);
  });

  it('handles two deliveries of the same event at once', async () => {
    const { files, documents, run } = setup('a.png', png);
    const outcomes = await Promise.all([run(), run()]);
    expect(outcomes).toContainEqual({ status: 'available', type: 'png' });
    expect(documents.records.get(DOC)?.status).toBe('available');
    expect([...files.objects.keys()]).toEqual([finalKey]);
  });

  it('removes a file posted to a key no session owns', async () => {
    const { files, documents, run } = setup('a.png', png);
    documents.records.clear();
    expect(await run()).toEqual({ status: 'ignored' });
    expect([...files.objects.keys()]).toEqual([]);
  });
});
