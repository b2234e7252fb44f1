import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jpeg, txt } from '../fixtures/documents.ts';
import { call, PARTNER } from '../support/api.ts';
import type { ApiAnswer, Identity } from '../support/api.ts';
import { npmScript } from '../support/cli.ts';
import { documentsPath, runtimeStores, upload } from '../support/documents.ts';
import type { RuntimeStores } from '../support/documents.ts';
import { eventDetailSchemas } from '#shared/http/schemas/events.ts';
import { awaitEvent, ofType, readEvents, recordOf } from '../support/events.ts';
import type { PublishedEvent } from '../support/events.ts';
import { CARD, CARD_NUMBER, ECHECK, ECHECK_NUMBER, customerPath, locationPath, unique } from '../support/paymethods.ts';

/**
 * Domain events end to end: requests against `npm start`, events read from
 * `.local/events-<port>.jsonl` as the local EventBridge stand-in wrote them.
 * Each suite works in an organization of its own, so "no other event" can be
 * checked on everything published for it.
 */
let stores: RuntimeStores;
let org: Identity;

beforeAll(async () => {
  stores = runtimeStores();
  org = await stores.freshOrganization(PARTNER.organizationId);
});
afterAll(() => stores?.destroy());

const eventsOf = async (member: string, id: unknown) => (await readEvents()).filter((event) => event.detail[member] === id);
const typesOf = (events: readonly PublishedEvent[]) => events.map((event) => event['detail-type']);
/** One record's events, in the order they were committed, carry strictly increasing occurred_at. */
function expectInOrder(events: readonly PublishedEvent[]): void {
  const times = events.map((event) => event.detail.occurred_at);
  expect(times, JSON.stringify(typesOf(events))).toEqual([...new Set(times)].sort());
}

/** What every event carries, and what none may. */
function expectWellFormed(event: PublishedEvent, source: string): void {
  expect(event).toMatchObject({ version: '0', source, account: expect.any(String), region: expect.any(String), resources: [] });
  expect(event.id).toMatch(/^[0-9a-f-]{36}$/);
  expect(event.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  expect(event.detail.event_id).toMatch(/^evt_[0-9a-f]{32}$/);
  expect(event.detail.organization_id).toBe(org.organizationId);
  expect(new Date(event.detail.occurred_at).toISOString()).toBe(event.detail.occurred_at);
  // The published schema of its detail-type, strict: no member beyond the ones documented.
  const schema = eventDetailSchemas[event['detail-type'] as keyof typeof eventDetailSchemas];
  expect(schema, event['detail-type']).toBeDefined();
  const parsed = schema.safeParse(event.detail);
  expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  for (const secret of [CARD_NUMBER, ECHECK_NUMBER, '"vault"', '"pk"', '"gsi1pk"', 'ciphertext', '"links"', '"response"']) expect(event.raw).not.toContain(secret);
}

describe('paymethod events', () => {
  const loc = unique('loc_');
  const cst = unique('cst_');
  const paymethodPath = (token: unknown) => `${locationPath(org.organizationId, loc)}/paymethods/${String(token)}`;
  const get = async (token: unknown) => recordOf((await call(paymethodPath(token), { as: org })).body);

  it('publishes Created, Updated and Deleted, each with the record as GET shows it, and nothing for failed requests', async () => {
    const created = await call(customerPath(org.organizationId, loc, cst), { method: 'POST', as: org, body: { card: CARD, label: 'first' } });
    expect(created.status, created.text).toBe(201);
    const token = created.body.paymethod_token;

    const createdEvent = await awaitEvent(ofType('Paymethod Created', 'paymethod_token', token));
    expectWellFormed(createdEvent, 'payments.paymethods');
    const { event_id: _id, occurred_at: _at, ...createdDetail } = createdEvent.detail;
    expect(createdDetail).toEqual(await get(token));

    // Refused requests: a field error, an account number in an update, an unknown record, another organization's path.
    expect((await call(paymethodPath(token), { method: 'PUT', as: org, body: { card: { account_number: CARD_NUMBER } } })).status).toBe(400);
    expect((await call(paymethodPath(token), { method: 'PUT', as: org, body: { label: 'x'.repeat(5000) } })).status).toBe(400);
    expect((await call(paymethodPath('mth_000000000000000000missing'), { method: 'DELETE', as: org })).status).toBe(404);
    const refusedCreate = await call(customerPath(org.organizationId, loc, cst), { method: 'POST', as: org, body: { card: { ...CARD, account_number: '4111111111111112' } } });
    expect(refusedCreate.status).toBe(400);

    const updated = await call(paymethodPath(token), { method: 'PUT', as: org, body: { label: 'second' } });
    expect(updated.status, updated.text).toBe(200);
    const updatedEvent = await awaitEvent(ofType('Paymethod Updated', 'paymethod_token', token));
    expectWellFormed(updatedEvent, 'payments.paymethods');
    const { event_id: _uid, occurred_at: _uat, ...updatedDetail } = updatedEvent.detail;
    expect(updatedDetail).toEqual(await get(token));
    expect(updatedDetail.label).toBe('second');

    const deleteSent = Date.now();
    expect((await call(paymethodPath(token), { method: 'DELETE', as: org })).status).toBe(200);
    const deleteAnswered = Date.now();
    const deletedEvent = await awaitEvent(ofType('Paymethod Deleted', 'paymethod_token', token));
    expectWellFormed(deletedEvent, 'payments.paymethods');
    // A deletion sets no time of its own: it is dated by the stream, when it happened (not the minute DynamoDB Local rounds to).
    expect(Date.parse(deletedEvent.detail.occurred_at)).toBeGreaterThanOrEqual(deleteSent);
    expect(Date.parse(deletedEvent.detail.occurred_at)).toBeLessThanOrEqual(deleteAnswered + 5_000);
    expect(Object.keys(deletedEvent.detail).sort()).toEqual(['event_id', 'occurred_at', 'organization_id', 'paymethod_token']);

    // A record's changes arrive in order (one stream shard per item): once Deleted is there, everything before it is.
    const forRecord = await eventsOf('paymethod_token', token);
    expect(typesOf(forRecord)).toEqual(['Paymethod Created', 'Paymethod Updated', 'Paymethod Deleted']);
    expect(new Set(forRecord.map((event) => event.detail.event_id)).size).toBe(3);
    // occurred_at orders them too, as a consumer receiving them out of order sorts them: the deletion sets no time of its own.
    expectInOrder(forRecord);
    // The refused create left nothing: every event of this customer is about the one record.
    expect((await eventsOf('customer_token', cst)).every((event) => event.detail.paymethod_token === token)).toBe(true);
  });

  it('publishes Updated for a record changed by another request: the next paymethod becomes the default', async () => {
    const customer = unique('cst_');
    const first = await call(customerPath(org.organizationId, loc, customer), { method: 'POST', as: org, body: { card: CARD } });
    const second = await call(customerPath(org.organizationId, loc, customer), { method: 'POST', as: org, body: { echeck: ECHECK } });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect((await call(paymethodPath(first.body.paymethod_token), { method: 'DELETE', as: org })).status).toBe(200);

    const promoted = await awaitEvent(ofType('Paymethod Updated', 'paymethod_token', second.body.paymethod_token));
    expectWellFormed(promoted, 'payments.paymethods');
    expect(promoted.detail.is_default).toBe('true');
    expectInOrder(await eventsOf('paymethod_token', second.body.paymethod_token));
    const { event_id: _id, occurred_at: _at, ...detail } = promoted.detail;
    expect(detail).toEqual(await get(second.body.paymethod_token));
  });

  it('publishes Account Updated when the Account Updater changes a card', async () => {
    const created = await call(`${locationPath(org.organizationId, loc)}/paymethods`, { method: 'POST', as: org, body: { card: CARD } });
    expect(created.status, created.text).toBe(201);
    const token = created.body.paymethod_token as string;
    await awaitEvent(ofType('Paymethod Created', 'paymethod_token', token));
    const before = (await get(token)).card as Record<string, unknown>;

    const dir = await mkdtemp(path.join(tmpdir(), 'events-au-'));
    try {
      const file = path.join(dir, 'updates.csv');
      await writeFile(file, `paymethod_token,au_code,account_number,expire_month,expire_year\n${token},new,4012888888881881,,\n`);
      const applied = await npmScript('au:apply', file, '--org', org.organizationId);
      expect(applied.code, applied.stderr).toBe(0);
      expect(JSON.parse(applied.stdout)).toMatchObject({ applied: 1 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }

    const event = await awaitEvent(ofType('Paymethod Account Updated', 'paymethod_token', token));
    expectWellFormed(event, 'payments.paymethods');
    expect(event.raw).not.toContain('4012888888881881');
    const { event_id: _id, occurred_at: occurredAt, previous, ...detail } = event.detail;
    expect(detail).toEqual(await get(token));
    expect(detail.card).toMatchObject({ au_code: 'new', last_4_account_number: '1881' });
    // The card before the update: last four, expiry and fingerprint.
    expect(previous).toEqual({ last_4_account_number: before.last_4_account_number, expire_month: before.expire_month, expire_year: before.expire_year, fingerprint: before.fingerprint });
    expect((detail.card as { fingerprint: string }).fingerprint).not.toBe(before.fingerprint);
    expect(occurredAt).toBe((detail.card as { au_updated_date: string }).au_updated_date);
    expect(typesOf(await eventsOf('paymethod_token', token))).toEqual(['Paymethod Created', 'Paymethod Account Updated']);
  });
});

describe('document events', () => {
  interface Session {
    document_id: string;
    upload: { url: string; fields: Record<string, string> };
  }
  const get = async (id: unknown) => recordOf((await call(documentsPath(org.organizationId, String(id)), { as: org })).body);
  const remove = (id: unknown) => call(documentsPath(org.organizationId, String(id)), { method: 'DELETE', as: org });
  const openSession = (fileName: string): Promise<ApiAnswer<Session>> =>
    call<Session>(`${documentsPath(org.organizationId)}/uploads`, { method: 'POST', as: org, body: { resource: 'application', resource_id: 'app_1', description: 'scan', file_name: fileName } });
  async function postFile(session: Session, bytes: Buffer): Promise<void> {
    const form = new FormData();
    for (const [name, value] of Object.entries(session.upload.fields)) form.append(name, value);
    form.append('file', new Blob([bytes]), 'file');
    expect((await fetch(session.upload.url, { method: 'POST', body: form })).status).toBe(204);
  }

  it('publishes Created for an upload and Deleted once it is removed, nothing for a refused upload', async () => {
    const refused = await upload(org, { resource: 'application', resource_id: 'app_1', description: 'refused' }, { name: 'scan.png', contentType: 'image/png', bytes: jpeg });
    expect(refused.status).toBe(400);
    const uploaded = await upload(org, { resource: 'application', resource_id: 'app_1', description: 'receipt' }, { name: 'receipt.jpg', contentType: 'image/jpeg', bytes: jpeg });
    expect(uploaded.status, uploaded.text).toBe(201);
    const id = uploaded.body.document_id;

    const created = await awaitEvent(ofType('Document Created', 'document_id', id));
    expectWellFormed(created, 'payments.documents');
    const { event_id: _id, occurred_at: _at, organization_id: organizationId, ...detail } = created.detail;
    expect(organizationId).toBe(org.organizationId);
    // The record as GET showed it then: its scan may have ended since (its own event, below).
    const { scan_status: scanStatusThen, ...rest } = detail;
    const { scan_status: _scanStatusNow, ...now } = await get(id);
    expect(scanStatusThen).toBe('pending');
    expect(rest).toEqual(now);
    expect(detail.status).toBe('available');
    expect((await awaitEvent(ofType('Document Scanned', 'document_id', id))).detail.scan_status).toBe('clean');

    expect((await remove(id)).status).toBe(200);
    const deleted = await awaitEvent(ofType('Document Deleted', 'document_id', id));
    expectWellFormed(deleted, 'payments.documents');
    expect(Object.keys(deleted.detail).sort()).toEqual(['document_id', 'event_id', 'occurred_at', 'organization_id']);
    expect(typesOf(await eventsOf('document_id', id))).toEqual(['Document Created', 'Document Scanned', 'Document Deleted']);
    expectInOrder(await eventsOf('document_id', id));
    expect((await readEvents()).some((event) => event.detail.description === 'refused')).toBe(false);
  });

  it('publishes Rejected for a refused session file and Created for an accepted one, nothing while a session is pending', async () => {
    const rejectedSession = await openSession('notes.txt');
    const acceptedSession = await openSession('photo.jpg');
    const pendingSession = await openSession('never.jpg');
    for (const opened of [rejectedSession, acceptedSession, pendingSession]) expect(opened.status, opened.text).toBe(201);

    await postFile(rejectedSession.body, Buffer.concat([txt, Buffer.from([0])]));
    await postFile(acceptedSession.body, jpeg);
    const rejected = await awaitEvent(ofType('Document Rejected', 'document_id', rejectedSession.body.document_id));
    expectWellFormed(rejected, 'payments.documents');
    const { event_id: _id, occurred_at: _at, organization_id: _org, ...detail } = rejected.detail;
    expect(detail).toEqual(await get(rejectedSession.body.document_id));
    expect(detail).toMatchObject({ status: 'rejected', reason: expect.any(String) });
    const accepted = await awaitEvent(ofType('Document Created', 'document_id', acceptedSession.body.document_id));
    expect(accepted.detail.status).toBe('available');

    // A pending session is no document yet: deleting it announces nothing. A rejected one was announced, so its removal is.
    expect((await remove(pendingSession.body.document_id)).status).toBe(200);
    expect((await remove(rejectedSession.body.document_id)).status).toBe(200);
    await awaitEvent(ofType('Document Deleted', 'document_id', rejectedSession.body.document_id));
    expect(await eventsOf('document_id', pendingSession.body.document_id)).toEqual([]);
    expect(typesOf(await eventsOf('document_id', rejectedSession.body.document_id))).toEqual(['Document Rejected', 'Document Deleted']);
  });
});
