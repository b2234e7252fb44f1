import { setTimeout as sleep } from 'node:timers/promises';
import type { S3Event } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jpeg, png, txt, wav } from '../fixtures/documents.ts';
import { PARTNER, call } from '../support/api.ts';
import type { ApiAnswer, Identity } from '../support/api.ts';
import { documentsPath, runtimeStores, scanned } from '../support/documents.ts';
import type { RuntimeStores } from '../support/documents.ts';

interface Session {
  document_id: string;
  status: string;
  upload: { url: string; fields: Record<string, string>; expires_at: string };
}

/** Bounded polling: the S3 event is asynchronous. */
async function poll<T>(read: () => Promise<T>, done: (value: T) => boolean, attempts = 100, delayMs = 100): Promise<T> {
  let value = await read();
  for (let attempt = 1; attempt < attempts && !done(value); attempt += 1) {
    await sleep(delayMs);
    value = await read();
  }
  return value;
}

describe('documents: upload sessions', () => {
  let stores: RuntimeStores;
  let org: Identity;
  let sessions = 0;

  const open = (body: Record<string, unknown>, as: Identity = org) => call<Session>(`${documentsPath(as.organizationId)}/uploads`, { method: 'POST', as, body });
  const get = (id: string) => call(documentsPath(org.organizationId, id), { as: org });
  const settled = (id: string) => poll(() => get(id), (answer) => answer.body?.status !== 'pending');

  /** Posts the form S3 expects: the returned fields, then the file, as a browser would. */
  async function postForm(session: Session, bytes: Buffer, contentType?: string): Promise<Response> {
    const form = new FormData();
    for (const [name, value] of Object.entries(session.upload.fields)) form.append(name, value);
    if (contentType) form.append('Content-Type', contentType);
    form.append('file', new Blob([bytes]), 'ignored-by-s3');
    return fetch(session.upload.url, { method: 'POST', body: form });
  }

  async function sessionThrough(fileName: string, bytes: Buffer, options: { contentType?: string; resource?: string } = {}): Promise<{ id: string; final: ApiAnswer }> {
    const resource = options.resource ?? 'application';
    // A resource_id per session: the same bytes twice for one resource_id end rejected as a duplicate.
    sessions += 1;
    const opened = await open({ resource, resource_id: `${resource === 'dispute' ? 'dsp' : 'app'}_s${sessions}`, description: 'big scan', file_name: fileName });
    expect(opened.status, opened.text).toBe(201);
    const posted = await postForm(opened.body, bytes, options.contentType);
    expect(posted.status).toBe(204);
    return { id: opened.body.document_id, final: await settled(opened.body.document_id) };
  }

  beforeAll(async () => {
    stores = runtimeStores();
    org = await stores.freshOrganization(PARTNER.organizationId);
  });
  afterAll(() => stores?.destroy());

  it('opens a session: a pending document and a presigned POST pinned to its key', async () => {
    const answer = await open({ resource: 'dispute', resource_id: 'dsp_9', description: 'recording', file_name: 'C:\\calls\\poa.wav' });
    expect(answer.status, answer.text).toBe(201);
    const body = answer.body;
    expect(body).toMatchObject({ resource: 'dispute', resource_id: 'dsp_9', description: 'recording', file: 'poa.wav', status: 'pending', response: { response_desc: 'Create Successful.' } });
    expect(body.document_id).toMatch(/^doc_[0-9A-Za-z]{22}$/);
    expect(body.upload.fields.key).toBe(`uploads/${org.organizationId}/${body.document_id}`);
    expect(Date.parse(body.upload.expires_at)).toBeGreaterThan(Date.now());
    const policy = JSON.parse(Buffer.from(body.upload.fields.Policy as string, 'base64').toString('utf8')) as { conditions: unknown[] };
    expect(policy.conditions).toContainEqual(['content-length-range', 1, 8_000_000]);
    expect(policy.conditions).toContainEqual({ key: body.upload.fields.key });
    // The form AWS gets, here too: the encryption is a field the policy pins, so the client cannot change it.
    expect(body.upload.fields['x-amz-server-side-encryption']).toBe('aws:kms');
    expect(body.upload.fields['x-amz-server-side-encryption-aws-kms-key-id']).toMatch(/^arn:aws:kms:[a-z0-9-]+:\d{12}:key\//);
    expect(policy.conditions).toContainEqual({ 'x-amz-server-side-encryption': 'aws:kms' });
    expect(answer.headers.get('location')).toMatch(new RegExp(`/v3/organizations/${org.organizationId}/documents/${body.document_id}$`));

    const pending = await get(body.document_id);
    expect(pending.status).toBe(200);
    expect(pending.body).toMatchObject({ document_id: body.document_id, status: 'pending', file: 'poa.wav' });
    expect(pending.body).not.toHaveProperty('type');
    expect(pending.body).not.toHaveProperty('size');
    const download = await call(`${documentsPath(org.organizationId, body.document_id)}/file`, { as: org });
    expect(download.status).toBe(409);
  });

  it.each([
    ['a missing file_name', { resource: 'application', resource_id: 'app_1' }, 'file_name'],
    ['a file_name with another extension', { resource: 'application', resource_id: 'app_1', file_name: 'a.pdf' }, 'file_name'],
    ['a WAV for an application', { resource: 'application', resource_id: 'app_1', file_name: 'a.wav' }, 'file_name'],
    ['a file_name of 256 characters', { resource: 'application', resource_id: 'app_1', file_name: `${'a'.repeat(252)}.png` }, 'file_name'],
    ['an unknown member', { resource: 'application', resource_id: 'app_1', file_name: 'a.png', size: 10 }, 'size'],
    ['a resource_id of another resource', { resource: 'dispute', resource_id: 'app_1', file_name: 'a.png' }, 'resource_id'],
  ])('refuses %s with 400 and stores nothing', async (_label, body, field) => {
    const isolated = await stores.freshOrganization();
    const answer = await open(body, isolated);
    expect(answer.status, answer.text).toBe(400);
    expect((answer.body as unknown as { response: { errors: Array<{ field: string }> } }).response.errors.map((error) => error.field)).toContain(field);
    expect(await stores.documentItems(isolated.organizationId)).toEqual([]);
  });

  it('names every failing field: the file name too when other members fail', async () => {
    const isolated = await stores.freshOrganization();
    const fieldsOf = async (body: Record<string, unknown>) =>
      ((await open(body, isolated)).body as unknown as { response: { errors: Array<{ field: string }> } }).response.errors.map((error) => error.field).sort();
    expect(await fieldsOf({ resource: 'application', resource_id: 'bad', file_name: 'x.gif' })).toEqual(['file_name', 'resource_id']);
    expect(await fieldsOf({ resource: 'application', resource_id: 'app_1', description: 5, file_name: 'a.wav' })).toEqual(['description', 'file_name']);
    expect(await fieldsOf({ resource: 'nope', resource_id: 'app_1', file_name: 'a.gif', zz: 1 })).toEqual(['file_name', 'resource', 'zz']);
    expect(await stores.documentItems(isolated.organizationId)).toEqual([]);
  });

  it('refuses a body that is not JSON with 415', async () => {
    const answer = await call(`${documentsPath(org.organizationId)}/uploads`, { method: 'POST', as: org, rawBody: 'file_name=a.png', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    expect(answer.status).toBe(415);
  });

  it('finalizes a posted file end to end: available, listed, downloadable, upload key gone', async () => {
    const { id, final } = await sessionThrough('scan.jpg', jpeg, { contentType: 'image/jpeg' });
    expect(final.body).toMatchObject({ document_id: id, status: 'available', type: 'jpeg', size: jpeg.length, file: 'scan.jpg', received_date: new Date().toISOString().slice(0, 10) });
    const listed = await call<{ results: Array<{ document_id: string }> }>(documentsPath(org.organizationId), { as: org });
    expect(listed.body.results.map((result) => result.document_id)).toContain(id);
    expect((await scanned(org, id)).body.scan_status).toBe('clean');
    const download = await call(`${documentsPath(org.organizationId, id)}/file`, { as: org });
    expect(download.status).toBe(302);
    const file = await fetch(download.headers.get('location') as string);
    expect(Buffer.from(await file.arrayBuffer()).equals(jpeg)).toBe(true);
    expect(file.headers.get('content-type')).toBe('image/jpeg');
    // Kept: the copy of the upload that was checked, under a key no form can write.
    const keys = (await stores.objectKeys(org.organizationId)).filter((key) => key.includes(id));
    expect(keys).toEqual([expect.stringMatching(new RegExp(`^documents/${org.organizationId}/${id}/[A-Za-z0-9-]+$`))]);
  });

  it('accepts exactly 8,000,000 bytes', async () => {
    const bytes = Buffer.alloc(8_000_000, 0x61);
    const { final } = await sessionThrough('large.txt', bytes);
    expect(final.body).toMatchObject({ status: 'available', type: 'txt', size: 8_000_000 });
  });

  it.each([
    ['8,000,001 bytes', Buffer.alloc(8_000_001, 0x61), 'EntityTooLarge'],
    ['an empty file', Buffer.alloc(0), 'EntityTooSmall'],
  ])('refuses %s at S3, as its policy says, and stores nothing: the document stays pending', async (_label, bytes, code) => {
    const opened = await open({ resource: 'application', resource_id: 'app_1', description: 'big scan', file_name: 'large.txt' });
    expect(opened.status, opened.text).toBe(201);
    const posted = await postForm(opened.body, bytes);
    expect(posted.status).toBe(400);
    expect(await posted.text()).toContain(`<Code>${code}</Code>`);
    expect((await stores.objectKeys(org.organizationId)).filter((key) => key.includes(opened.body.document_id))).toEqual([]);
    const read = await call(documentsPath(org.organizationId, opened.body.document_id), { as: org });
    expect(read.body).toMatchObject({ status: 'pending' });
  });

  it.each([
    ['a PNG posted for a .jpg session', 'photo.jpg', png, undefined, 'does not match the extension'],
    ['a PNG declared image/gif', 'photo.png', png, 'image/gif', 'image/gif does not match'],
    ['text that is not UTF-8', 'notes.txt', Buffer.concat([txt, Buffer.from([0xc3])]), undefined, 'a txt file must be UTF-8'],
  ])('rejects %s with a reason and keeps no file', async (_label, fileName, bytes, contentType, reason) => {
    const { id, final } = await sessionThrough(fileName, bytes, { contentType });
    expect(final.body).toMatchObject({ status: 'rejected', reason: expect.stringContaining(reason) });
    // The record turns rejected before the finalizer removes the files: give the removal its moment.
    const keys = await poll(() => stores.objectKeys(org.organizationId), (current) => !current.some((key) => key.includes(id)));
    expect(keys.filter((key) => key.includes(id))).toEqual([]);
  });

  it('finalizes audio for a dispute', async () => {
    const { final } = await sessionThrough('poa.wav', wav, { resource: 'dispute', contentType: 'audio/wav' });
    expect(final.body).toMatchObject({ status: 'available', type: 'wav', size: wav.length });
  });

  it('is idempotent: a repeated S3 event changes nothing', async () => {
    const { id } = await sessionThrough('again.png', png);
    // Once the scan has ended too, nothing else changes the record.
    const final = await scanned(org, id);
    expect(final.body).toMatchObject({ status: 'available', scan_status: 'clean' });
    const { handler } = await import('#functions/documents-finalize.ts');
    const event = { Records: [{ eventName: 'ObjectCreated:Post', s3: { bucket: { name: stores.bucket }, object: { key: `uploads/${org.organizationId}/${id}`, size: png.length } } }] } as unknown as S3Event;
    await handler(event, {} as never);
    await handler(event, {} as never);
    expect((await get(id)).body).toEqual(final.body);
    expect((await stores.objectKeys(org.organizationId)).filter((key) => key.includes(id))).toEqual([expect.stringMatching(new RegExp(`^documents/${org.organizationId}/${id}/`))]);
  });

  it('deletes a pending session, and a file posted afterwards does not stay behind', async () => {
    const opened = await open({ resource: 'application', resource_id: 'app_1', file_name: 'late.png' });
    const id = opened.body.document_id;
    const deleted = await call(documentsPath(org.organizationId, id), { as: org, method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect((await get(id)).status).toBe(404);
    expect((await postForm(opened.body, png)).status).toBe(204);
    const keys = await poll(() => stores.objectKeys(org.organizationId), (current) => !current.some((key) => key.includes(id)));
    expect(keys.filter((key) => key.includes(id))).toEqual([]);
    expect((await stores.documentItems(org.organizationId)).filter((item) => (item.document_id as { S?: string } | undefined)?.S === id)).toEqual([]);
  });
});
