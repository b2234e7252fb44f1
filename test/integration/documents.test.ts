import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samples, txt, png } from '../fixtures/documents.ts';
import { MERCHANT, PARTNER, UNRELATED, call } from '../support/api.ts';
import type { Identity } from '../support/api.ts';
import { documentsPath, runtimeStores, scanned, upload } from '../support/documents.ts';
import type { RuntimeStores } from '../support/documents.ts';

const today = () => new Date().toISOString().slice(0, 10);

describe('documents: upload, get, download, delete', () => {
  let stores: RuntimeStores;
  let merchant: Identity;

  beforeAll(async () => {
    stores = runtimeStores();
    merchant = await stores.freshOrganization(PARTNER.organizationId);
  });
  afterAll(() => stores?.destroy());

  it.each(samples.map((sample, index) => [`${sample.type} (${sample.name}, ${sample.contentType})`, sample, index] as const))('stores a %s', async (_label, sample, index) => {
    // A resource_id per sample: some samples share their bytes, which one resource_id refuses as a duplicate.
    const answer = await upload(merchant, { resource: sample.resource, resource_id: `${sample.resource === 'dispute' ? 'dsp' : 'app'}_42s${index}`, description: 'evidence' }, sample);
    expect(answer.status, answer.text).toBe(201);
    const body = answer.body as Record<string, unknown>;
    expect(body).toMatchObject({
      resource: sample.resource,
      type: sample.type,
      file: sample.name,
      description: 'evidence',
      size: sample.bytes.length,
      received_date: today(),
      response: { environment: 'local', response_desc: 'Create Successful.' },
    });
    expect(body.document_id).toMatch(/^doc_[0-9A-Za-z]{22}$/);
    const self = `${new URL(answer.headers.get('location') as string).origin}${documentsPath(merchant.organizationId, body.document_id as string)}`;
    expect(answer.headers.get('location')).toBe(self);
    expect((body.links as Record<string, string>).self).toBe(self);
    expect(answer.headers.get('x-request-id')).toBeTruthy();

    expect((await scanned(merchant, body.document_id as string)).body.scan_status).toBe('clean');
    const download = await call(documentsPath(merchant.organizationId, body.document_id as string, 'file'), { as: merchant });
    expect(download.status).toBe(302);
    const file = await fetch(download.headers.get('location') as string);
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer()).equals(sample.bytes)).toBe(true);
  });

  it('strips Windows and POSIX paths from the file name', async () => {
    for (const [index, [name, expected]] of [
      ['C:\\Users\\pat\\scan.png', 'scan.png'],
      ['/home/pat/scan.png', 'scan.png'],
      ['../../etc/scan.png', 'scan.png'],
    ].entries()) {
      const answer = await upload(merchant, { resource: 'application', resource_id: `app_path${index}` }, { name: name as string, contentType: 'image/png', bytes: png });
      expect(answer.status, answer.text).toBe(201);
      expect(answer.body.file).toBe(expected);
      expect(answer.body).not.toHaveProperty('description');
    }
  });

  it('reads a document back with the spec members and its status', async () => {
    const created = await upload(merchant, { resource: 'bankaccount', resource_id: 'bac_7', description: 'voided check' }, { name: 'check.txt', contentType: 'text/plain', bytes: txt });
    const id = created.body.document_id as string;
    await scanned(merchant, id);
    const answer = await call(documentsPath(merchant.organizationId, id), { as: merchant });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      document_id: id,
      resource: 'bankaccount',
      resource_id: 'bac_7',
      type: 'txt',
      file: 'check.txt',
      description: 'voided check',
      size: txt.length,
      received_date: today(),
      status: 'available',
      sha256: createHash('sha256').update(txt).digest('hex'),
      scan_status: 'clean',
      legal_hold: false,
      response: { environment: 'local', response_desc: 'Get Successful.' },
      links: { self: expect.stringMatching(new RegExp(`/v3/organizations/${merchant.organizationId}/documents/${id}$`)) },
    });
    // A trailing slash names the same record.
    expect((await call(`${documentsPath(merchant.organizationId, id)}/`, { as: merchant })).status).toBe(200);
  });

  it('lets the partner read its merchant documents, and nobody else', async () => {
    const created = await upload(merchant, { resource: 'application', resource_id: 'app_9' }, { name: 'a.png', contentType: 'image/png', bytes: png });
    const path = documentsPath(merchant.organizationId, created.body.document_id as string);
    expect((await call(path, { as: PARTNER })).status).toBe(200);
    expect((await call(path, { as: UNRELATED })).status).toBe(403);
    // Another organization's document under the caller's own organization: 404, no hint it exists.
    const foreign = await call(documentsPath(MERCHANT.organizationId, created.body.document_id as string), { as: MERCHANT });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ response: { response_code: 'NOT_FOUND' } });
    expect((await call(`${documentsPath(MERCHANT.organizationId, created.body.document_id as string)}/file`, { as: MERCHANT })).status).toBe(404);
    expect((await call(documentsPath(MERCHANT.organizationId, created.body.document_id as string), { as: MERCHANT, method: 'DELETE' })).status).toBe(404);
  });

  it('answers 404 for ids without their prefix or unknown, and 401 without credentials', async () => {
    expect((await call(documentsPath(merchant.organizationId, 'pzlJxWtKTcuutSHsH5wqrN'), { as: merchant })).status).toBe(404);
    expect((await call(documentsPath(merchant.organizationId, 'doc_pzlJxWtKTcuutSHsH5wqrN'), { as: merchant })).status).toBe(404);
    expect((await call(`/v3/organizations/${merchant.organizationId.slice(4)}/documents`, { as: merchant })).status).toBe(404);
    const anonymous = await call(documentsPath(merchant.organizationId), { as: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    expect((await call(documentsPath(merchant.organizationId), { as: merchant, method: 'PUT' })).status).toBe(405);
  });

  it('deletes record and file, then answers 404', async () => {
    const created = await upload(merchant, { resource: 'application', resource_id: 'app_5' }, { name: 'gone.png', contentType: 'image/png', bytes: png });
    const id = created.body.document_id as string;
    expect(await stores.objectKeys(merchant.organizationId)).toContain(`documents/${merchant.organizationId}/${id}`);

    const answer = await call(documentsPath(merchant.organizationId, id), { as: merchant, method: 'DELETE' });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ document_id: id, response: { environment: 'local', response_desc: 'Delete Successful.' } });
    expect(await stores.objectKeys(merchant.organizationId)).not.toContain(`documents/${merchant.organizationId}/${id}`);
    expect((await stores.documentItems(merchant.organizationId)).some((item) => (item.document_id as { S?: string } | undefined)?.S === id)).toBe(false);
    expect((await call(documentsPath(merchant.organizationId, id), { as: merchant })).status).toBe(404);
    expect((await call(documentsPath(merchant.organizationId, id), { as: merchant, method: 'DELETE' })).status).toBe(404);
  });
});
