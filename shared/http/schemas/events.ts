/**
 * The detail of each domain event (docs/events.md), built from the same view
 * schemas GET answers are described with, so an event's record cannot drift
 * from the API's. `docs/events.schema.json` is generated from these
 * (`npm run --silent events:schemas`); a unit test fails while it is stale.
 */
import { z } from 'zod';
import { documentViewSchema } from './documents.ts';
import { DOCUMENT_EVENT_TYPES, EVENT_SOURCES, PAYMETHOD_EVENT_TYPES } from '#shared/domain/events/domain-events.ts';
import type { DocumentEventType, PaymethodEventType } from '#shared/domain/events/domain-events.ts';
import { paymethodReadViewSchema } from './paymethods.ts';

const head = {
  event_id: z.string().regex(/^evt_[0-9a-f]{32}$/).meta({ description: 'Stable across redeliveries of the same change: deduplicate on it.' }),
  organization_id: z.string().meta({ description: 'The organization that owns the record.' }),
  occurred_at: z.string().meta({ format: 'date-time', description: 'When the change was committed (ISO 8601, UTC).' }),
};

const paymethodRecord = z.strictObject({ ...paymethodReadViewSchema.shape, ...head });
/** What an Account Updater change replaced (the card before it). */
const previousCard = z
  .strictObject({
    last_4_account_number: z.string(),
    expire_month: z.int().min(1).max(12),
    expire_year: z.int(),
    fingerprint: z.string().optional(),
  })
  .meta({ description: 'The card as it was before the update: last four, expiry and fingerprint.' });
const paymethodAccountUpdated = z.strictObject({ ...paymethodReadViewSchema.shape, ...head, previous: previousCard.optional() });
const paymethodDeleted = z.strictObject({ ...head, paymethod_token: paymethodReadViewSchema.shape.paymethod_token });
const documentRecord = z.strictObject({ ...documentViewSchema.shape, ...head });
const documentDeleted = z.strictObject({ ...head, document_id: documentViewSchema.shape.document_id });

export const eventDetailSchemas = {
  'Paymethod Created': paymethodRecord.meta({ description: 'A paymethod was created: the record as GET shows it.' }),
  'Paymethod Updated': paymethodRecord.meta({ description: 'A public member changed (an update, or another write such as a new default): the record after the change.' }),
  'Paymethod Account Updated': paymethodAccountUpdated.meta({ description: 'The Account Updater changed the card (au_code, au_updated_date and what the update carried): the record after the change, and `previous`, the card before it.' }),
  'Paymethod Deleted': paymethodDeleted.meta({ description: 'The paymethod was deleted: its ids only.' }),
  'Document Created': documentRecord.meta({ description: 'A document became available (a direct upload, or an upload session whose file was accepted).' }),
  'Document Rejected': documentRecord.meta({ description: 'An upload session\'s file was refused: status rejected, with the reason.' }),
  'Document Scanned': documentRecord.meta({ description: 'The malware scan of a stored file ended: scan_status is clean, infected (the bytes were removed) or failed.' }),
  'Document Deleted': documentDeleted.meta({ description: 'An available or rejected document was removed: its ids only.' }),
} as const satisfies Record<PaymethodEventType | DocumentEventType, z.ZodType>;

/** One JSON Schema (draft 2020-12) per source and detail-type. */
export function eventSchemasDocument(): Record<string, unknown> {
  const bySource = (source: string, types: readonly (PaymethodEventType | DocumentEventType)[]) =>
    Object.fromEntries(types.map((type) => [type, { source, 'detail-type': type, detail: z.toJSONSchema(eventDetailSchemas[type], { target: 'draft-2020-12' }) }]));
  return {
    description: 'Domain events of the payments service: the detail of each EventBridge event, per source and detail-type. See docs/events.md.',
    events: { ...bySource(EVENT_SOURCES.paymethods, PAYMETHOD_EVENT_TYPES), ...bySource(EVENT_SOURCES.documents, DOCUMENT_EVENT_TYPES) },
  };
}

export function serializeEventSchemas(): string {
  return `${JSON.stringify(eventSchemasDocument(), null, 2)}\n`;
}
