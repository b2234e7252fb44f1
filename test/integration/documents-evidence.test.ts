import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DeleteObjectCommand, GetObjectRetentionCommand, HeadObjectCommand, PutObjectLegalHoldCommand, PutObjectRetentionCommand, PutObjectTaggingCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EICAR } from '../../local/malware-scanner.ts';
import { jpeg, mp3FrameSync, png, txt, wav } from '../fixtures/documents.ts';
import { PARTNER, call } from '../support/api.ts';
import type { ApiAnswer, Identity } from '../support/api.ts';
import { documentsPath, runtimeStores, scanned, upload } from '../support/documents.ts';
import type { RuntimeStores } from '../support/documents.ts';
import { awaitEvent, ofType } from '../support/events.ts';

interface Session {
  document_id: string;
  upload: { url: string; fields: Record<string, string>; expires_at: string };
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const today = () => new Date().toISOString().slice(0, 10);
const plusYears = (date: string, years: number) => `${Number(date.slice(0, 4)) + years}${date.slice(4)}`;

describe('documents as evidence', () => {
  let stores: RuntimeStores;
  let org: Identity;
  let resourceCounter = 0;
  /** A resource_id of its own per test, so that one test's files are never another's duplicates. */
  const resourceId = (prefix: 'app_' | 'dsp_' = 'app_') => `${prefix}ev${(resourceCounter += 1)}`;

  const get = (id: string) => call(documentsPath(org.organizationId, id), { as: org });
  const download = (id: string) => call(documentsPath(org.organizationId, id, 'file'), { as: org });
  const remove = (id: string) => call(documentsPath(org.organizationId, id), { method: 'DELETE', as: org });
  const put = (id: string, body: unknown) => call(documentsPath(org.organizationId, id), { method: 'PUT', as: org, body });
  const open = (body: Record<string, unknown>) => call<Session>(`${documentsPath(org.organizationId)}/uploads`, { method: 'POST', as: org, body });

  async function postForm(session: Session, bytes: Buffer): Promise<Response> {
    const form = new FormData();
    for (const [name, value] of Object.entries(session.upload.fields)) form.append(name, value);
    form.append('file', new Blob([bytes]), 'ignored-by-s3');
    return fetch(session.upload.url, { method: 'POST', body: form });
  }

  async function settled(id: string): Promise<ApiAnswer> {
    for (let attempt = 0; attempt < 100; attempt += 1) {
      const answer = await get(id);
      if (answer.body?.status !== 'pending') return answer;
      await sleep(100);
    }
    return get(id);
  }

  beforeAll(async () => {
    stores = runtimeStores();
    org = await stores.freshOrganization(PARTNER.organizationId);
  });
  afterAll(() => stores?.destroy());

  it('carries the SHA-256 of the stored bytes on create, get, list and the event; scans it clean; serves it then', async () => {
    const created = await upload(org, { resource: 'application', resource_id: resourceId() }, { name: 'scan.jpg', contentType: 'image/jpeg', bytes: jpeg });
    expect(created.status, created.text).toBe(201);
    const id = created.body.document_id as string;
    expect(created.body).toMatchObject({ sha256: sha256(jpeg), scan_status: 'pending', legal_hold: false });
    expect(created.body).not.toHaveProperty('retain_until');

    // Before the scan reports, nothing is served, and the client is told when to ask again.
    const early = await download(id);
    expect(early.status, early.text).toBe(409);
    expect(early.body.response).toMatchObject({ response_code: 'SCAN_PENDING' });
    expect(Number(early.headers.get('retry-after'))).toBeGreaterThan(0);

    const started = Date.now();
    const clean = await scanned(org, id);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(clean.body).toMatchObject({ sha256: sha256(jpeg), scan_status: 'clean' });
    const listed = await call<{ results: Array<Record<string, unknown>> }>(documentsPath(org.organizationId), { as: org });
    expect(listed.body.results.find((result) => result.document_id === id)).toMatchObject({ sha256: sha256(jpeg), scan_status: 'clean', legal_hold: false });

    const served = await download(id);
    expect(served.status, served.text).toBe(302);
    expect(Buffer.from(await (await fetch(served.headers.get('location') as string)).arrayBuffer()).equals(jpeg)).toBe(true);

    expect((await awaitEvent(ofType('Document Created', 'document_id', id))).detail.sha256).toBe(sha256(jpeg));
    const scannedEvent = await awaitEvent(ofType('Document Scanned', 'document_id', id));
    expect(scannedEvent.detail).toMatchObject({ scan_status: 'clean', sha256: sha256(jpeg) });
  });

  it('EICAR end to end: pending, infected, 409 on download, bytes gone, record kept, Document Scanned event', async () => {
    const eicar = Buffer.from(EICAR, 'latin1');
    expect(eicar.length).toBe(68);
    const created = await upload(org, { resource: 'bankaccount', resource_id: 'bac_eicar' }, { name: 'eicar.txt', contentType: 'text/plain', bytes: eicar });
    expect(created.status, created.text).toBe(201);
    const id = created.body.document_id as string;
    expect(created.body.scan_status).toBe('pending');
    expect(await stores.objectKeys(org.organizationId)).toContain(`documents/${org.organizationId}/${id}`);

    const infected = await scanned(org, id);
    expect(infected.status).toBe(200);
    expect(infected.body).toMatchObject({ document_id: id, status: 'available', scan_status: 'infected', sha256: sha256(eicar) });
    const refused = await download(id);
    expect(refused.status).toBe(409);
    expect(refused.body.response).toMatchObject({ response_code: 'DOCUMENT_INFECTED' });
    expect((await stores.objectKeys(org.organizationId)).filter((key) => key.includes(id))).toEqual([]);
    const event = await awaitEvent(ofType('Document Scanned', 'document_id', id));
    expect(event.detail).toMatchObject({ scan_status: 'infected', organization_id: org.organizationId });
    // The record is evidence of the attempt, and can still be deleted.
    expect((await remove(id)).status).toBe(200);
  });

  it('the bucket refuses to serve an unscanned file even to a presigned URL the download function signed', async () => {
    const resource = resourceId();
    const created = await upload(org, { resource: 'application', resource_id: resource }, { name: 'p.png', contentType: 'image/png', bytes: png });
    const id = created.body.document_id as string;
    await scanned(org, id);
    // Take the clean tag off (as an object that was never scanned has none): the gate, like the bucket policy, refuses the read.
    const key = `documents/${org.organizationId}/${id}`;
    await stores.s3.send(new PutObjectTaggingCommand({ Bucket: stores.bucket, Key: key, Tagging: { TagSet: [] } }));
    const signed = await download(id);
    expect(signed.status).toBe(302);
    expect((await fetch(signed.headers.get('location') as string)).status).toBe(403);
    // The operator (GuardDuty's role in AWS) still reads it.
    expect((await stores.s3.send(new HeadObjectCommand({ Bucket: stores.bucket, Key: key }))).ContentLength).toBe(png.length);
  });

  it('refuses the same bytes for the same resource_id with 409 DUPLICATE_DOCUMENT naming the first; another resource_id is a new document', async () => {
    const resource = resourceId();
    const first = await upload(org, { resource: 'application', resource_id: resource }, { name: 'a.png', contentType: 'image/png', bytes: png });
    expect(first.status, first.text).toBe(201);
    const keysBefore = await stores.objectKeys(org.organizationId);
    const again = await upload(org, { resource: 'application', resource_id: resource }, { name: 'renamed.png', contentType: 'image/png', bytes: png });
    expect(again.status, again.text).toBe(409);
    expect(again.body.response).toMatchObject({
      response_code: 'DUPLICATE_DOCUMENT',
      errors: [{ field: 'file', message: expect.stringContaining(first.body.document_id as string) }],
    });
    expect((again.body.response as { response_desc: string }).response_desc).toContain(first.body.document_id as string);
    // Nothing stored: no object, no record.
    expect(await stores.objectKeys(org.organizationId)).toEqual(keysBefore);
    const other = await upload(org, { resource: 'application', resource_id: resourceId() }, { name: 'a.png', contentType: 'image/png', bytes: png });
    expect(other.status, other.text).toBe(201);

    // Deleting the document frees its hash.
    await scanned(org, first.body.document_id as string);
    expect((await remove(first.body.document_id as string)).status).toBe(200);
    const afterDelete = await upload(org, { resource: 'application', resource_id: resource }, { name: 'a.png', contentType: 'image/png', bytes: png });
    expect(afterDelete.status, afterDelete.text).toBe(201);
  });

  it('two concurrent uploads of one file: one 201, one 409, and only the winner is stored', async () => {
    const resource = resourceId();
    const bytes = Buffer.concat([jpeg, Buffer.from(`race ${Date.now()}`)]);
    const answers = await Promise.all([1, 2, 3].map(() => upload(org, { resource: 'application', resource_id: resource }, { name: 'race.jpg', contentType: 'image/jpeg', bytes })));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([201, 409, 409]);
    const winner = answers.find((answer) => answer.status === 201)!.body.document_id as string;
    for (const loser of answers.filter((answer) => answer.status === 409)) expect((loser.body.response as { response_desc: string }).response_desc).toContain(winner);
    // The refused uploads' files were removed again: every stored file of the organization has its record.
    const items = await stores.documentItems(org.organizationId);
    expect(items.filter((item) => (item.resource_id as { S?: string }).S === resource).map((item) => (item.document_id as { S: string }).S)).toEqual([winner]);
    const recorded = new Set(items.map((item) => (item.document_id as { S: string }).S));
    const stray = (await stores.objectKeys(org.organizationId)).filter((key) => key.startsWith('documents/') && !recorded.has(key.split('/')[2] as string));
    expect(stray).toEqual([]);
  });

  it('an upload session whose file repeats an existing document ends rejected naming it', async () => {
    const resource = resourceId();
    const first = await upload(org, { resource: 'application', resource_id: resource }, { name: 'a.jpg', contentType: 'image/jpeg', bytes: jpeg });
    expect(first.status).toBe(201);
    const session = await open({ resource: 'application', resource_id: resource, file_name: 'again.jpg' });
    expect(session.status, session.text).toBe(201);
    expect((await postForm(session.body, jpeg)).status).toBe(204);
    const final = await settled(session.body.document_id);
    expect(final.body).toMatchObject({ status: 'rejected', reason: expect.stringContaining(first.body.document_id as string) });
    expect((await stores.objectKeys(org.organizationId)).filter((key) => key.includes(session.body.document_id))).toEqual([]);
  });

  it('a session with sha256: S3 refuses a different file (BadDigest), takes the declared one, and the document carries it', async () => {
    const bytes = Buffer.concat([png, Buffer.from(' declared')]);
    const session = await open({ resource: 'application', resource_id: resourceId(), file_name: 'declared.png', sha256: sha256(bytes).toUpperCase() });
    expect(session.status, session.text).toBe(201);
    expect(session.body.upload.fields['x-amz-checksum-sha256']).toBe(createHash('sha256').update(bytes).digest('base64'));
    const policy = JSON.parse(Buffer.from(session.body.upload.fields.Policy as string, 'base64').toString('utf8')) as { conditions: unknown[] };
    expect(policy.conditions).toContainEqual({ 'x-amz-checksum-sha256': createHash('sha256').update(bytes).digest('base64') });

    const wrong = await postForm(session.body, png);
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain('BadDigest');
    expect((await get(session.body.document_id)).body.status).toBe('pending');
    expect((await stores.objectKeys(org.organizationId)).filter((key) => key.includes(session.body.document_id))).toEqual([]);

    expect((await postForm(session.body, bytes)).status).toBe(204);
    const final = await settled(session.body.document_id);
    expect(final.body).toMatchObject({ status: 'available', sha256: sha256(bytes), scan_status: 'pending' });
    expect((await scanned(org, session.body.document_id)).body.scan_status).toBe('clean');
  });

  it('refuses a malformed sha256 on a session', async () => {
    const answer = await open({ resource: 'application', resource_id: resourceId(), file_name: 'a.png', sha256: 'abc' });
    expect(answer.status).toBe(400);
    expect((answer.body as unknown as { response: unknown }).response).toMatchObject({ errors: [{ field: 'sha256', message: expect.stringContaining('64 hexadecimal') }] });
  });

  it('keeps dispute audio two years: retain_until, DELETE 409 RETENTION_ACTIVE, the file locked in the bucket', async () => {
    const created = await upload(org, { resource: 'dispute', resource_id: resourceId('dsp_') }, { name: 'call.wav', contentType: 'audio/wav', bytes: wav });
    expect(created.status, created.text).toBe(201);
    const id = created.body.document_id as string;
    expect(created.body).toMatchObject({ retain_until: plusYears(today(), 2), legal_hold: false });
    const mp3 = await upload(org, { resource: 'dispute', resource_id: resourceId('dsp_') }, { name: 'call.mp3', contentType: 'audio/mpeg', bytes: mp3FrameSync });
    expect(mp3.body.retain_until).toBe(plusYears(today(), 2));
    const note = await upload(org, { resource: 'dispute', resource_id: resourceId('dsp_') }, { name: 'note.txt', contentType: 'text/plain', bytes: txt });
    expect(note.body).not.toHaveProperty('retain_until');

    const refused = await remove(id);
    expect(refused.status).toBe(409);
    expect(refused.body.response).toMatchObject({ response_code: 'RETENTION_ACTIVE' });
    expect((await get(id)).status).toBe(200);

    // Once scanned clean, the stored file itself is locked: no call without the bypass right removes it or shortens its date.
    await scanned(org, id);
    const key = `documents/${org.organizationId}/${id}`;
    const lock = await stores.s3.send(new GetObjectRetentionCommand({ Bucket: stores.bucket, Key: key }));
    expect(lock.Retention?.Mode).toBe('GOVERNANCE');
    expect(lock.Retention?.RetainUntilDate?.toISOString().slice(0, 10)).toBe(plusYears(today(), 2));
    await expect(stores.s3.send(new DeleteObjectCommand({ Bucket: stores.bucket, Key: key }))).rejects.toMatchObject({ name: 'AccessDenied' });
    await expect(
      stores.s3.send(new PutObjectRetentionCommand({ Bucket: stores.bucket, Key: key, Retention: { Mode: 'GOVERNANCE', RetainUntilDate: new Date(Date.now() + 86_400_000) } })),
    ).rejects.toMatchObject({ name: 'AccessDenied' });
    expect((await stores.s3.send(new HeadObjectCommand({ Bucket: stores.bucket, Key: key }))).ContentLength).toBe(wav.length);
  });

  it('PUT sets a legal hold and extends retain_until, never shortens it; DELETE waits for the hold to be released', async () => {
    const created = await upload(org, { resource: 'application', resource_id: resourceId() }, { name: 'hold.jpg', contentType: 'image/jpeg', bytes: Buffer.concat([jpeg, Buffer.from('hold')]) });
    const id = created.body.document_id as string;
    await scanned(org, id);

    const held = await put(id, { legal_hold: true });
    expect(held.status, held.text).toBe(200);
    expect(held.body).toMatchObject({ document_id: id, legal_hold: true, response: { response_desc: 'Update Successful.' } });
    expect((await remove(id)).body.response).toMatchObject({ response_code: 'RETENTION_ACTIVE' });
    // The bucket holds it too.
    const key = `documents/${org.organizationId}/${id}`;
    await expect(stores.s3.send(new DeleteObjectCommand({ Bucket: stores.bucket, Key: key }))).rejects.toMatchObject({ name: 'AccessDenied' });

    const later = plusYears(today(), 3);
    const extended = await put(id, { retain_until: later });
    expect(extended.status, extended.text).toBe(200);
    expect(extended.body).toMatchObject({ retain_until: later, legal_hold: true });
    const shorter = await put(id, { retain_until: plusYears(today(), 1) });
    expect(shorter.status).toBe(400);
    expect(shorter.body.response).toMatchObject({ errors: [{ field: 'retain_until', message: expect.stringContaining('never shortened') }] });
    expect((await get(id)).body.retain_until).toBe(later);

    for (const body of [{}, { description: 'x' }, { legal_hold: 'yes' }, { retain_until: '2030-02-30' }]) {
      const answer = await put(id, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
    }

    expect((await put(id, { legal_hold: false })).body.legal_hold).toBe(false);
    // Still retained by its date.
    expect((await remove(id)).body.response).toMatchObject({ response_code: 'RETENTION_ACTIVE' });
    expect((await put('doc_0000000000000000000000', { legal_hold: true })).status).toBe(404);
  });

  it('an operator with the bypass right can shorten a retention and remove the file (the court-order path)', async () => {
    const created = await upload(org, { resource: 'application', resource_id: resourceId() }, { name: 'order.png', contentType: 'image/png', bytes: Buffer.concat([png, Buffer.from('order')]) });
    const id = created.body.document_id as string;
    await scanned(org, id);
    expect((await put(id, { retain_until: plusYears(today(), 1) })).status).toBe(200);
    const key = `documents/${org.organizationId}/${id}`;
    await stores.s3.send(new PutObjectRetentionCommand({ Bucket: stores.bucket, Key: key, BypassGovernanceRetention: true, Retention: { Mode: 'GOVERNANCE', RetainUntilDate: new Date(Date.now() - 1000) } }));
    await stores.s3.send(new PutObjectLegalHoldCommand({ Bucket: stores.bucket, Key: key, LegalHold: { Status: 'OFF' } }));
    await stores.s3.send(new DeleteObjectCommand({ Bucket: stores.bucket, Key: key, BypassGovernanceRetention: true }));
    expect((await stores.objectKeys(org.organizationId)).filter((object) => object.includes(id))).toEqual([]);
  });
});
