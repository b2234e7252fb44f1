/**
 * The finalizer against in-memory ports that fail on demand: after any
 * failure the S3 retry (the same call again) must end in the same state as a
 * clean run, with no object left behind.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { AvailableDocument, StoredDocument } from '#shared/domain/documents/document.ts';
import { checkedUploadObjectKey, uploadObjectKey } from '#shared/domain/documents/document.ts';
import type { DocumentFiles, DocumentRepository } from '#shared/domain/documents/ports.ts';
import { deleteDocument } from '#shared/domain/documents/delete-document.ts';
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

/** S3 as the finalizer sees it: every write gives the object a new tag (its ETag), and a copy can require the source's. */
class MemoryFiles implements DocumentFiles {
  readonly objects = new Map<string, { bytes: Uint8Array; contentType: string | undefined; tag: string }>();
  private writes = 0;
  constructor(private readonly faults: Faults) {}
  write(key: string, bytes: Uint8Array, contentType: string | undefined) {
    this.objects.set(key, { bytes, contentType, tag: `"etag-${(this.writes += 1)}"` });
  }
  async put(key: string, bytes: Uint8Array, contentType: string) {
    this.faults.check('put');
    this.write(key, bytes, contentType);
  }
  async delete(key: string) {
    this.faults.check('delete');
    this.objects.delete(key);
  }
  async head(key: string) {
    this.faults.check('head');
    const object = this.objects.get(key);
    return object ? { size: object.bytes.length, contentType: object.contentType, tag: object.tag } : undefined;
  }
  async keysUnder(prefix: string) {
    return [...this.objects.keys()].filter((key) => key.startsWith(prefix));
  }
  async purge(key: string) {
    this.objects.delete(key);
  }
  async retain(): Promise<void> {
    throw new Error('not used');
  }
  async read(key: string): Promise<AsyncIterable<Uint8Array>> {
    this.faults.check('read');
    const bytes = this.objects.get(key)?.bytes ?? new Uint8Array();
    return (async function* () {
      yield bytes;
    })();
  }
  async copy(fromKey: string, toKey: string, sourceTag: string): Promise<'copied' | 'changed'> {
    this.faults.check('copy');
    const object = this.objects.get(fromKey);
    if (object?.tag !== sourceTag) return 'changed';
    this.write(toKey, object.bytes, object.contentType);
    return 'copied';
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
  async remove(previous: StoredDocument) {
    this.records.delete(previous.document_id);
  }
  async setScanStatus(): Promise<never> {
    throw new Error('not used');
  }
  async setRetention(): Promise<never> {
    throw new Error('not used');
  }
  async markDeleting(_organizationId: string, documentId: string): Promise<StoredDocument | undefined> {
    const record = this.records.get(documentId);
    if (record) this.records.set(documentId, { ...record, status: 'deleting' });
    return record;
  }
  async restore(previous: StoredDocument): Promise<void> {
    this.records.set(previous.document_id, previous);
  }
  async list(): Promise<never> {
    throw new Error('not used');
  }
}

const ORG = 'org_1';
const DOC = 'doc_0123456789abcdefghijkl';
const uploadKey = uploadObjectKey(ORG, DOC);
/** The copy of the upload as first posted (the fake's first write). */
const finalKey = checkedUploadObjectKey(ORG, DOC, '"etag-1"');

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
  files.write(uploadKey, bytes, 'binary/octet-stream');
  const deps = { files, documents, clock: () => new Date('2026-01-02T03:04:05.678Z') };
  return { faults, files, documents, run: () => finalizeUpload(uploadKey, deps) };
}

describe('finalizer under failures', () => {
  it.each(['get', 'head', 'read', 'copy', 'markAvailable', 'delete'])('recovers when %s fails once: available, one object, no upload left', async (step) => {
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

  it('hashes what it keeps, and rejects a file whose SHA-256 is not the one the session declared', async () => {
    const kept = setup('a.png', png);
    await kept.run();
    expect(kept.documents.records.get(DOC)).toMatchObject({ status: 'available', sha256: createHash('sha256').update(png).digest('hex'), scan_status: 'pending', legal_hold: false });

    const declared = setup('a.png', png);
    declared.documents.records.set(DOC, { ...declared.documents.records.get(DOC)!, declared_sha256: 'b'.repeat(64) });
    expect(await declared.run()).toEqual({ status: 'rejected' });
    expect(declared.documents.records.get(DOC)).toMatchObject({ status: 'rejected', reason: expect.stringContaining(`not the sha256 the session declared (${'b'.repeat(64)})`) });
    expect([...declared.files.objects.keys()]).toEqual([]);
  });

  it('drops its copy when the document is deleted while it copies', async () => {
    const { files, documents, run } = setup('a.png', png);
    const copy = files.copy.bind(files);
    files.copy = async (from, to, tag) => {
      const copied = await copy(from, to, tag);
      documents.records.delete(DOC);
      return copied;
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

  it('keeps the bytes it checked when the form is posted again while it checks them', async () => {
    const text = Buffer.from('a perfectly valid receipt\n'.repeat(10));
    const executable = Buffer.concat([Buffer.from('MZ\x90\x00', 'latin1'), Buffer.alloc(5000, 0xcc)]);
    const { files, documents, run } = setup('a.txt', text);
    const read = files.read.bind(files);
    files.read = async (key) => {
      // The second POST lands while the text is scanned.
      files.write(uploadKey, executable, 'application/octet-stream');
      return read(key);
    };
    expect(await run()).toEqual({ status: 'available', type: 'txt' });
    const record = documents.records.get(DOC) as AvailableDocument;
    expect(record).toMatchObject({ status: 'available', type: 'txt', size: text.length });
    expect(Buffer.from(files.objects.get(record.object_key)!.bytes)).toEqual(text);
    // The second POST's own event finds the document kept: its file goes.
    expect(await run()).toEqual({ status: 'ignored' });
    expect([...files.objects.keys()]).toEqual([record.object_key]);
  });

  it("leaves an upload written again before its copy to that write's own event", async () => {
    const { files, documents, run } = setup('a.png', png);
    const head = files.head.bind(files);
    let posted = false;
    files.head = async (key) => {
      const facts = await head(key);
      if (key === uploadKey && !posted) {
        posted = true;
        files.write(uploadKey, Buffer.from('not a png'), 'image/png');
      }
      return facts;
    };
    expect(await run()).toEqual({ status: 'ignored' });
    expect(documents.records.get(DOC)?.status).toBe('pending');
    expect([...files.objects.keys()]).toEqual([uploadKey]);
    // The second write's event: checked as it is, and refused.
    expect(await run()).toEqual({ status: 'rejected' });
    expect([...files.objects.keys()]).toEqual([]);
  });

  it('leaves no copy behind when the session is deleted after a run copied the upload but failed to commit', async () => {
    const { faults, files, documents, run } = setup('a.png', png);
    faults.arm('markAvailable');
    await expect(run()).rejects.toThrow('injected');
    expect([...files.objects.keys()].sort()).toEqual([finalKey, uploadKey].sort());
    // The client deletes the pending session; the event's retry then finds no record and no upload.
    await deleteDocument(ORG, DOC, { files, documents });
    expect(await run()).toEqual({ status: 'ignored' });
    expect([...files.objects.keys()]).toEqual([]);
  });

  it('leaves no copy behind when an available document is deleted after a run for an earlier version of its upload failed', async () => {
    const { faults, files, documents, run } = setup('a.png', png);
    faults.arm('markAvailable');
    await expect(run()).rejects.toThrow('injected');
    // The form is posted again before that event's retry: the second version is the one kept.
    files.write(uploadKey, png, 'image/png');
    expect(await run()).toEqual({ status: 'available', type: 'png' });
    const kept = (documents.records.get(DOC) as AvailableDocument).object_key;
    expect(kept).not.toBe(finalKey);
    // The first run's copy outlives every retry: no event names it any more.
    expect(await run()).toEqual({ status: 'ignored' });
    expect([...files.objects.keys()].sort()).toEqual([finalKey, kept].sort());

    await deleteDocument(ORG, DOC, { files, documents });
    expect([...files.objects.keys()]).toEqual([]);
    expect(documents.records.has(DOC)).toBe(false);
  });

  it('deletes the kept file last, so a refused delete leaves the available document whole', async () => {
    const { faults, files, documents, run } = setup('a.png', png);
    faults.arm('markAvailable');
    await expect(run()).rejects.toThrow('injected');
    files.write(uploadKey, png, 'image/png');
    await run();
    await run();
    const kept = (documents.records.get(DOC) as AvailableDocument).object_key;
    const remove = files.delete.bind(files);
    files.delete = async (key) => {
      if (key === kept) throw Object.assign(new Error('refused (injected)'), { name: 'AccessDenied' });
      return remove(key);
    };

    await expect(deleteDocument(ORG, DOC, { files, documents })).rejects.toThrow('refused');
    expect(documents.records.get(DOC)).toMatchObject({ status: 'available', object_key: kept });
    expect([...files.objects.keys()]).toEqual([kept]);
  });

  it('removes a file posted to a key no session owns', async () => {
    const { files, documents, run } = setup('a.png', png);
    documents.records.clear();
    expect(await run()).toEqual({ status: 'ignored' });
    expect([...files.objects.keys()]).toEqual([]);
  });
});
