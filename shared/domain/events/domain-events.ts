/**
 * Domain events: what a committed change of a paymethod or a document means
 * to the outside world. The input is a change as storage committed it (the
 * record before and after one write, either side absent for a creation or a
 * removal); the output is at most one event. Nothing here knows DynamoDB,
 * EventBridge or HTTP: the record views are handed in, so an event's detail
 * is exactly what GET answers (docs/events.md).
 */
import { EVENT_SOURCES } from '#shared/platform/names.ts';
import type { StoredDocument } from '../documents/document.ts';
import type { Paymethod } from '../paymethods/model.ts';

export { EVENT_SOURCES };

export const PAYMETHOD_EVENT_TYPES = ['Paymethod Created', 'Paymethod Updated', 'Paymethod Deleted', 'Paymethod Account Updated'] as const;
export const DOCUMENT_EVENT_TYPES = ['Document Created', 'Document Rejected', 'Document Scanned', 'Document Deleted'] as const;
export type PaymethodEventType = (typeof PAYMETHOD_EVENT_TYPES)[number];
export type DocumentEventType = (typeof DOCUMENT_EVENT_TYPES)[number];

/** One committed write of one record, as storage saw it. */
export interface RecordChange<T> {
  /** Unique per committed write and the same on every redelivery of it; the event id is derived from it. */
  readonly changeId: string;
  /** When storage committed the write (ISO 8601 UTC); used when the record itself carries no timestamp of this write. */
  readonly committedAt: string;
  readonly before?: T;
  readonly after?: T;
}

export type StoredChange =
  | ({ readonly entity: 'paymethod' } & RecordChange<Paymethod>)
  | ({ readonly entity: 'document' } & RecordChange<StoredDocument>);

/** The public members of a record, exactly as GET shows them (no envelope, no links). */
export interface RecordViews {
  paymethod(paymethod: Paymethod): Record<string, unknown>;
  document(document: StoredDocument): Record<string, unknown>;
}

export interface DomainEvent {
  readonly source: (typeof EVENT_SOURCES)[keyof typeof EVENT_SOURCES];
  readonly detailType: PaymethodEventType | DocumentEventType;
  readonly detail: EventDetail;
}

export interface EventDetail {
  readonly event_id: string;
  readonly organization_id: string;
  readonly occurred_at: string;
  readonly [member: string]: unknown;
}

/** `evt_` and the change id: stable across redeliveries, so consumers deduplicate on it. */
export function eventIdOf(changeId: string): string {
  return `evt_${changeId}`;
}

/** The event a change publishes, or undefined when the change means nothing to a consumer. */
export function domainEventOf(change: StoredChange, views: RecordViews): DomainEvent | undefined {
  return change.entity === 'paymethod' ? paymethodEvent(change, views) : documentEvent(change, views);
}

export function classifyPaymethodChange(before: Paymethod | undefined, after: Paymethod | undefined, views: Pick<RecordViews, 'paymethod'>): PaymethodEventType | undefined {
  if (!before && after) return 'Paymethod Created';
  if (before && !after) return 'Paymethod Deleted';
  if (!before || !after) return undefined;
  const [card, previous] = [after.card, before.card];
  // The Account Updater stamps au_code and au_updated_date on every change it applies; nothing else writes them.
  if (card && (card.au_updated_date !== previous?.au_updated_date || card.au_code !== previous?.au_code)) return 'Paymethod Account Updated';
  // A write that leaves the public record as it was (an index key, the version) is no change to a consumer.
  return sameJson(views.paymethod(before), views.paymethod(after)) ? undefined : 'Paymethod Updated';
}

/**
 * Documents are announced when they become available (at once for a
 * single-request upload, when the finalizer accepts an upload session's file)
 * or rejected, and when a record that was announced is removed. Pending
 * sessions are never announced, nor is anything that happens to them. The
 * `deleting` flag is not a deletion yet (a failed delete puts the record back),
 * so neither flagging nor restoring publishes; the removal does. The end of a
 * stored file's malware scan (its scan_status leaving `pending`) is announced
 * once, with the verdict.
 */
export function classifyDocumentChange(before: StoredDocument | undefined, after: StoredDocument | undefined): DocumentEventType | undefined {
  if (before && !after) return wasAnnounced(before) ? 'Document Deleted' : undefined;
  if (before?.status === 'available' && after?.status === 'available' && after.scan_status !== undefined && after.scan_status !== 'pending' && before.scan_status !== after.scan_status) {
    return 'Document Scanned';
  }
  if (!after || before?.status === after.status || before?.status === 'deleting') return undefined;
  if (after.status === 'available') return 'Document Created';
  if (after.status === 'rejected') return 'Document Rejected';
  return undefined;
}

/** Whether consumers heard of the document: it was available or rejected, also when flagged `deleting` since. */
function wasAnnounced(document: StoredDocument): boolean {
  if (document.status === 'available' || document.status === 'rejected') return true;
  // The flag overwrites the status; what the record still carries tells what it was.
  return document.status === 'deleting' && (document.object_key !== undefined || document.received_at !== undefined || document.reason !== undefined);
}

function paymethodEvent(change: RecordChange<Paymethod>, views: RecordViews): DomainEvent | undefined {
  const detailType = classifyPaymethodChange(change.before, change.after, views);
  const record = change.after ?? change.before;
  if (!detailType || !record) return undefined;
  const head = {
    event_id: eventIdOf(change.changeId),
    organization_id: record.organization_id,
    occurred_at: occurredAt(paymethodWriteTime(change), change.committedAt, change.before?.updated_at),
    paymethod_token: record.paymethod_token,
  };
  const previous = detailType === 'Paymethod Account Updated' ? previousCard(change.before) : undefined;
  return {
    source: EVENT_SOURCES.paymethods,
    detailType,
    detail: change.after ? { ...head, ...views.paymethod(change.after), ...(previous ? { previous } : {}) } : head,
  };
}

/**
 * What an Account Updater change replaced: the card's last four, expiry and
 * fingerprint as they were before it (the stream's old image), so a consumer
 * can match the update to the card it knew without a second read.
 */
function previousCard(before: Paymethod | undefined): Record<string, unknown> | undefined {
  const card = before?.card;
  if (!card) return undefined;
  return {
    last_4_account_number: card.last_4_account_number,
    expire_month: card.expire_month,
    expire_year: card.expire_year,
    ...(card.fingerprint !== undefined ? { fingerprint: card.fingerprint } : {}),
  };
}

function documentEvent(change: RecordChange<StoredDocument>, views: RecordViews): DomainEvent | undefined {
  const detailType = classifyDocumentChange(change.before, change.after);
  const record = change.after ?? change.before;
  if (!detailType || !record) return undefined;
  const head = {
    event_id: eventIdOf(change.changeId),
    organization_id: record.organization_id,
    occurred_at: occurredAt(documentWriteTime(change), change.committedAt, change.before && latest(change.before.created_at, change.before.received_at)),
    document_id: record.document_id,
  };
  return {
    source: EVENT_SOURCES.documents,
    detailType,
    detail: change.after ? { ...head, ...views.document(change.after) } : head,
  };
}

/**
 * When a change happened, as consumers may order one record's events by it:
 * the writer's own timestamp when the write set one, else the stream's commit
 * time, and never earlier than 1 ms after the last time the state it replaces
 * carries. Without that floor a change that sets no time of its own (a
 * deletion, a default promotion, a document rejected) could date before the
 * write it follows, since the commit time is truncated; and an Account
 * Updater commit, dated at its run's start, before a merchant's update made
 * during the run.
 */
function occurredAt(writeTime: string | undefined, committedAt: string, previousTime: string | undefined): string {
  let at = Date.parse(writeTime ?? committedAt);
  if (previousTime !== undefined) at = Math.max(at, Date.parse(previousTime) + 1);
  return new Date(at).toISOString();
}

function latest(...times: Array<string | undefined>): string | undefined {
  return times.filter((time): time is string => time !== undefined).sort().at(-1);
}

/**
 * The writer's own timestamp of this write when the record carries one it set
 * (millisecond precision; the storage commit time is approximate, to the
 * second in AWS and to the minute in DynamoDB Local).
 */
function paymethodWriteTime({ before, after }: RecordChange<Paymethod>): string | undefined {
  if (!after) return undefined;
  if (!before) return after.created_at;
  return after.updated_at !== before.updated_at ? after.updated_at : undefined;
}

function documentWriteTime({ after }: RecordChange<StoredDocument>): string | undefined {
  return after?.status === 'available' ? after.received_at : undefined;
}

function sameJson(left: unknown, right: unknown): boolean {
  return JSON.stringify(sortedDeep(left)) === JSON.stringify(sortedDeep(right));
}

function sortedDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedDeep);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortedDeep((value as Record<string, unknown>)[key])]));
}
