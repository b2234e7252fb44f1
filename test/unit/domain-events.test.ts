import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { eventDetailSchemas, serializeEventSchemas } from '#shared/http/schemas/events.ts';
import { EventBridgeBus } from '#shared/aws/event-bus.ts';
import type { StoredDocument } from '#shared/domain/documents/document.ts';
import { domainEventOf } from '#shared/domain/events/domain-events.ts';
import type { DomainEvent } from '#shared/domain/events/domain-events.ts';
import { publishChanges } from '#shared/domain/events/publish.ts';
import type { EventBus } from '#shared/domain/events/publish.ts';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import type { SealedSecret } from '#shared/domain/vault.ts';
import { storedChangeOf } from '#shared/store/changes.ts';
import type { StreamRecord } from '#shared/store/changes.ts';
import { keys } from '#shared/store/keys.ts';
import { paymethodItem } from '#shared/store/paymethod-item.ts';
import { recordUpdatedAt } from '#shared/domain/account-updater/apply.ts';
import { recordViews } from '#shared/http/events.ts';

/** The stream's commit time, to the second as DynamoDB gives it: here no later than any write the records below carry. */
const COMMITTED_SECONDS = Date.parse('2026-11-24T00:00:00.000Z') / 1000;
const secret: SealedSecret = { v: 1, key_id: 'arn:aws:kms:us-east-1:1:key/k', encrypted_data_key: new Uint8Array([1, 2, 3]), iv: new Uint8Array([4]), ciphertext: new Uint8Array([5, 6]), tag: new Uint8Array([7]) } as unknown as SealedSecret;

const card: Paymethod = {
  paymethod_token: 'mth_aaaaaaaaaaaaaaaaaaaaaa',
  organization_id: 'org_1',
  location_id: 'loc_1',
  customer_token: 'cst_1',
  paymethod_type: 'card',
  card: { card_type: 'visa', name_on_card: 'Ann Lee', last_4_account_number: '1111', masked_account_number: '****1111', expire_month: 12, expire_year: 2031 },
  is_default: true,
  created_at: '2026-11-24T00:00:00.000Z',
  updated_at: '2026-11-24T00:00:00.000Z',
  version: 1,
};

const session: StoredDocument = {
  document_id: 'doc_aaaaaaaaaaaaaaaaaaaaaa',
  organization_id: 'org_1',
  resource: 'application',
  resource_id: 'app_1',
  file: 'scan.jpg',
  status: 'pending',
  upload_key: 'uploads/org_1/doc_aaaaaaaaaaaaaaaaaaaaaa',
  upload_expires_at: '2026-11-24T00:15:00.000Z',
  created_at: '2026-11-24T00:00:00.000Z',
};
const available: StoredDocument = { ...session, status: 'available', type: 'jpeg', size: 10, received_at: '2026-11-24T00:01:00.000Z', object_key: 'documents/org_1/doc_aaaaaaaaaaaaaaaaaaaaaa', upload_key: undefined, upload_expires_at: undefined };
const rejected: StoredDocument = { ...session, status: 'rejected', reason: 'file is not a jpeg', upload_key: undefined, upload_expires_at: undefined };

const paymethodItemOf = (record: Paymethod | undefined) => (record ? paymethodItem(record, secret) : undefined);
const documentItemOf = (record: StoredDocument | undefined) =>
  record ? { ...keys.document(record.organization_id, record.document_id), ...JSON.parse(JSON.stringify(record)), expires_at: 1_790_100_000 } : undefined;

/** A stream record as Lambda delivers it, built from items in the repositories' real layout. */
function streamRecord(eventID: string, before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): StreamRecord {
  const item = (after ?? before)!;
  const image = (value: Record<string, unknown>) => marshall(value, { removeUndefinedValues: true, convertClassInstanceToMap: true });
  return {
    eventID,
    dynamodb: {
      Keys: marshall({ pk: item.pk, sk: item.sk }),
      ...(before ? { OldImage: image(before) } : {}),
      ...(after ? { NewImage: image(after) } : {}),
      ApproximateCreationDateTime: COMMITTED_SECONDS,
      SequenceNumber: `${eventID}-seq`,
    },
  };
}

const paymethodEvent = (before?: Paymethod, after?: Paymethod, eventID = 'e1') => {
  const change = storedChangeOf(streamRecord(eventID, paymethodItemOf(before), paymethodItemOf(after)));
  return change && domainEventOf(change, recordViews);
};
const documentEvent = (before?: StoredDocument, after?: StoredDocument) => {
  const change = storedChangeOf(streamRecord('d1', documentItemOf(before), documentItemOf(after)));
  return change && domainEventOf(change, recordViews);
};
const typeOf = (event: DomainEvent | undefined) => event?.detailType;

describe('paymethod changes -> events', () => {
  it('Created carries the GET view, the creation time, and nothing stored beside it', () => {
    const event = paymethodEvent(undefined, card)!;
    expect(event.source).toBe('payments.paymethods');
    expect(event.detailType).toBe('Paymethod Created');
    const { event_id: eventId, occurred_at: occurredAt, ...detail } = event.detail;
    expect(eventId).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(occurredAt).toBe(card.created_at);
    expect(detail).toEqual(recordViews.paymethod(card));
    const text = JSON.stringify(event);
    for (const stored of ['vault', 'ciphertext', 'encrypted_data_key', '"pk"', 'gsi', 'version', 'entity', 'created_at']) expect(text).not.toContain(stored);
  });

  it('Updated when a public member changes, at the writer\'s update time; nothing when only internals change', () => {
    const relabelled = { ...card, label: 'new', updated_at: '2026-11-24T00:05:00.000Z', version: 2 };
    const updated = paymethodEvent(card, relabelled)!;
    expect(updated.detailType).toBe('Paymethod Updated');
    expect(updated.detail).toMatchObject({ label: 'new', occurred_at: '2026-11-24T00:05:00.000Z' });
    expect(paymethodEvent(card, { ...card, version: 2 })).toBeUndefined();
    // Another write made it the default (no updated_at of its own): the truncated commit time would date it before the
    // state it replaces, so it is dated 1 ms after that.
    const promoted = paymethodEvent({ ...card, is_default: false }, { ...card, version: 2 })!;
    expect(promoted).toMatchObject({ detailType: 'Paymethod Updated', detail: { is_default: 'true', occurred_at: '2026-11-24T00:00:00.001Z' } });
  });

  it('Account Updated when au_code or au_updated_date change, whatever else changed', () => {
    const au = { au_code: 'new', au_description: 'New account number', au_updated_date: '2026-11-24T00:09:00.000Z' };
    const renumbered = { ...card, card: { ...card.card!, ...au, last_4_account_number: '4444', masked_account_number: '****4444' }, updated_at: au.au_updated_date, version: 2 };
    const event = paymethodEvent(card, renumbered)!;
    expect(typeOf(event)).toBe('Paymethod Account Updated');
    expect(event.detail).toMatchObject({ occurred_at: au.au_updated_date, card: { au_code: 'new', last_4_account_number: '4444' } });
    // What the update replaced: the card before it, as the stream's old image holds it.
    expect(event.detail.previous).toEqual({
      last_4_account_number: card.card!.last_4_account_number,
      expire_month: card.card!.expire_month,
      expire_year: card.card!.expire_year,
      ...(card.card!.fingerprint !== undefined ? { fingerprint: card.card!.fingerprint } : {}),
    });
    expect(paymethodEvent(card, { ...card, label: 'x', updated_at: '2026-11-24T00:10:00.000Z', version: 2 })!.detail).not.toHaveProperty('previous');
    const again = { ...renumbered, card: { ...renumbered.card, au_code: 'exp', au_updated_date: '2026-11-25T00:00:00.000Z' }, version: 3 };
    expect(typeOf(paymethodEvent(renumbered, again))).toBe('Paymethod Account Updated');
    // A later ordinary update of an updated card is an ordinary update.
    expect(typeOf(paymethodEvent(renumbered, { ...renumbered, label: 'x', version: 3 }))).toBe('Paymethod Updated');
  });

  it('never dates a change before the one it follows: a relabel, an Account Updater commit during its run, a deletion', () => {
    // The run started at 00:09 (its au_updated_date); the merchant relabelled the card at 00:12; the run's line commits after.
    const relabelled = { ...card, label: 'mine', updated_at: '2026-11-24T00:12:00.000Z', version: 2 };
    const au = { au_code: 'exp', au_description: 'New expiration date', au_updated_date: '2026-11-24T00:09:00.000Z' };
    const accountUpdated = { ...relabelled, card: { ...relabelled.card!, ...au, expire_year: 2033 }, updated_at: recordUpdatedAt(au.au_updated_date, relabelled.updated_at), version: 3 };
    const events = [paymethodEvent(card, relabelled, 'r1')!, paymethodEvent(relabelled, accountUpdated, 'r2')!, paymethodEvent(accountUpdated, undefined, 'r3')!];
    expect(events.map(typeOf)).toEqual(['Paymethod Updated', 'Paymethod Account Updated', 'Paymethod Deleted']);
    expect(events.map((event) => event.detail.occurred_at)).toEqual(['2026-11-24T00:12:00.000Z', '2026-11-24T00:12:00.001Z', '2026-11-24T00:12:00.002Z']);
  });

  it('Deleted carries the ids and when it happened only: the commit time, after the last write it follows', () => {
    const event = paymethodEvent(card, undefined)!;
    expect(event.detailType).toBe('Paymethod Deleted');
    expect(event.detail).toEqual({ event_id: expect.any(String), organization_id: 'org_1', occurred_at: '2026-11-24T00:00:00.001Z', paymethod_token: card.paymethod_token });
    const record = streamRecord('e9', paymethodItemOf(card), undefined);
    const later = storedChangeOf({ ...record, dynamodb: { ...record.dynamodb, ApproximateCreationDateTime: COMMITTED_SECONDS + 60 } })!;
    expect(domainEventOf(later, recordViews)!.detail.occurred_at).toBe('2026-11-24T00:01:00.000Z');
  });

  it('derives event_id from the stream record: the same on a redelivery, different for another write', () => {
    expect(paymethodEvent(undefined, card, 'e1')!.detail.event_id).toBe(paymethodEvent(undefined, card, 'e1')!.detail.event_id);
    expect(paymethodEvent(undefined, card, 'e1')!.detail.event_id).not.toBe(paymethodEvent(undefined, card, 'e2')!.detail.event_id);
  });

  it('ignores every other item of the table', () => {
    const others = [
      { ...keys.customerDefault('org_1', 'cst_1'), paymethod_token: card.paymethod_token },
      { ...keys.oneTimeToken('ott_1'), organization_id: 'org_1' },
      { ...keys.idempotency('org_1', 'k'), status: 'done' },
      { ...keys.organization('org_1'), organization_id: 'org_1' },
      { ...keys.auHistory('org_1', '2026-11', '2026-11-24', card.paymethod_token, 2), au_code: 'new' },
      { pk: 'DOC#ORG#org_1', sk: 'x' },
    ];
    for (const item of others) expect(storedChangeOf(streamRecord('o', undefined, item)), item.pk).toBeUndefined();
  });
});

describe('document changes -> events', () => {
  it('announces a document when it becomes available: a direct upload, or an accepted session', () => {
    const direct = documentEvent(undefined, available)!;
    expect(direct).toMatchObject({ source: 'payments.documents', detailType: 'Document Created' });
    const { event_id: _id, occurred_at: occurredAt, organization_id: organizationId, ...detail } = direct.detail;
    expect(organizationId).toBe('org_1');
    expect(occurredAt).toBe(available.received_at);
    expect(detail).toEqual(recordViews.document(available));
    expect(JSON.stringify(direct)).not.toMatch(/object_key|upload_key|expires_at|"pk"/);
    expect(typeOf(documentEvent(session, available))).toBe('Document Created');
  });

  it('announces a rejected session with its reason, and nothing of a pending one', () => {
    const event = documentEvent(session, rejected)!;
    expect(event.detailType).toBe('Document Rejected');
    expect(event.detail).toMatchObject({ status: 'rejected', reason: 'file is not a jpeg' });
    expect(documentEvent(undefined, session)).toBeUndefined();
  });

  it('announces a removal only of a document that was announced, not the deleting flag or its undoing', () => {
    const flagged = (document: StoredDocument): StoredDocument => ({ ...document, status: 'deleting' });
    expect(documentEvent(available, flagged(available))).toBeUndefined();
    expect(documentEvent(flagged(available), available)).toBeUndefined();
    expect(documentEvent(flagged(rejected), rejected)).toBeUndefined();
    expect(documentEvent(flagged(available), undefined)!.detail).toEqual({
      event_id: expect.any(String),
      organization_id: 'org_1',
      occurred_at: '2026-11-24T00:01:00.001Z', // after the document became available
      document_id: available.document_id,
    });
    expect(typeOf(documentEvent(flagged(rejected), undefined))).toBe('Document Deleted');
    // A rejected record the table's TTL removes is gone for clients too.
    expect(typeOf(documentEvent(rejected, undefined))).toBe('Document Deleted');
    // A pending session deleted, or expired by TTL, was never a document.
    expect(documentEvent(flagged(session), undefined)).toBeUndefined();
    expect(documentEvent(session, undefined)).toBeUndefined();
  });
});

describe('publishing a batch', () => {
  const batch = [
    { position: '1', change: storedChangeOf(streamRecord('a', undefined, paymethodItemOf(card))) },
    { position: '2', change: undefined },
    { position: '3', change: storedChangeOf(streamRecord('b', documentItemOf(session), documentItemOf(available))) },
    { position: '4', change: storedChangeOf(streamRecord('c', paymethodItemOf(card), undefined)) },
  ];
  const busRefusing = (refused: number[]) => {
    const published: DomainEvent[][] = [];
    const bus: EventBus = {
      publish: async (events) => {
        published.push([...events]);
        return { failed: refused };
      },
    };
    return { bus, published };
  };

  it('publishes every event of the batch in stream order, once', async () => {
    const { bus, published } = busRefusing([]);
    expect(await publishChanges(batch, { bus, views: recordViews })).toEqual({ published: 3, ignored: 1 });
    expect(published.flat().map((event) => event.detailType)).toEqual(['Paymethod Created', 'Document Created', 'Paymethod Deleted']);
  });

  it('asks for a retry from the first change whose event the bus refused', async () => {
    const { bus } = busRefusing([2, 1]);
    expect(await publishChanges(batch, { bus, views: recordViews })).toEqual({ published: 1, ignored: 1, retryFrom: '3' });
  });

  it('puts ten entries per PutEvents call and reports refused entries by their place in the batch', async () => {
    const client = new EventBridgeClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
    const mock = mockClient(client);
    mock.on(PutEventsCommand).callsFake((input: { Entries: unknown[] }) => {
      const call = mock.commandCalls(PutEventsCommand).length;
      // The second call refuses its fourth entry.
      const entries = input.Entries.map((_entry, index) => (call === 2 && index === 3 ? { ErrorCode: 'ThrottlingException', ErrorMessage: 'slow down' } : { EventId: `id-${index}` }));
      return { FailedEntryCount: entries.filter((entry) => 'ErrorCode' in entry).length, Entries: entries };
    });
    const event = paymethodEvent(undefined, card)!;
    const { failed } = await new EventBridgeBus(client, 'bus-1').publish(Array.from({ length: 23 }, () => event));
    expect(failed).toEqual([13]);
    const calls = mock.commandCalls(PutEventsCommand).map((call) => call.args[0].input.Entries!);
    expect(calls.map((entries) => entries.length)).toEqual([10, 10, 3]);
    expect(calls[0]![0]).toEqual({ EventBusName: 'bus-1', Source: 'payments.paymethods', DetailType: 'Paymethod Created', Detail: JSON.stringify(event.detail), Time: new Date(card.created_at) });
    mock.restore();
  });
});

describe('published event schemas', () => {
  it('are committed as docs/events.schema.json exactly as the code generates them', () => {
    const committed = readFileSync(fileURLToPath(new URL('../../docs/events.schema.json', import.meta.url)), 'utf8');
    expect(committed, 'docs/events.schema.json is out of date: run `npm run --silent events:schemas` and commit the result').toBe(serializeEventSchemas());
  });

  it('describe the details the mapping produces, and refuse a detail with anything more', () => {
    const samples = [
      paymethodEvent(undefined, { ...card, label: 'l', customer_id: 'C-1' }),
      paymethodEvent(card, undefined),
      documentEvent(undefined, available),
      documentEvent(session, rejected),
      documentEvent(available, undefined),
    ];
    for (const event of samples) {
      const schema = eventDetailSchemas[event!.detailType];
      expect(schema.safeParse(event!.detail).success, event!.detailType).toBe(true);
      expect(schema.safeParse({ ...event!.detail, vault: 'x' }).success).toBe(false);
    }
  });
});
