import * as z from 'zod/mini';
import { WEBHOOK_EVENT_TYPES } from '#shared/platform/names.ts';
import { InvalidRequest } from '../errors.ts';
import { parseWith } from '../validation.ts';
import { DEFAULT_PREVIOUS_SECRET_SECONDS, MAX_DESCRIPTION_LENGTH, MAX_PREVIOUS_SECRET_SECONDS } from './model.ts';

/** The event types an endpoint may subscribe to: every domain event's, or `*`. */
export const SUBSCRIBABLE_EVENT_TYPES: readonly string[] = Object.values(WEBHOOK_EVENT_TYPES);

const eventTypes = z
  .array(z.string().check(z.refine((type) => type === '*' || SUBSCRIBABLE_EVENT_TYPES.includes(type), { message: `must be one of ${SUBSCRIBABLE_EVENT_TYPES.join(', ')}, or *` })))
  .check(
    z.minLength(1, 'must not be empty'),
    z.maxLength(SUBSCRIBABLE_EVENT_TYPES.length, `must hold at most ${SUBSCRIBABLE_EVENT_TYPES.length} types`),
    z.refine((types) => new Set(types).size === types.length, { message: 'must not repeat a type' }),
    z.refine((types) => !types.includes('*') || types.length === 1, { message: '* stands alone' }),
  );
const description = z.string().check(z.maxLength(MAX_DESCRIPTION_LENGTH, `must be at most ${MAX_DESCRIPTION_LENGTH} characters`));
// The URL's own rules (https, public host) are checked after parsing, with their own code.
const url = z.string().check(z.minLength(1, 'is required'));

export const endpointCreateSchema = z.strictObject({
  url,
  event_types: z.optional(eventTypes),
  description: z.optional(description),
  organization_id: z.optional(z.string()),
});

export const endpointUpdateSchema = z.strictObject({
  url: z.optional(url),
  event_types: z.optional(eventTypes),
  description: z.optional(description),
  status: z.optional(z.enum(['enabled', 'disabled'])),
  organization_id: z.optional(z.string()),
});

export const rollSecretSchema = z.strictObject({
  expire_previous_after_seconds: z._default(z.int().check(z.minimum(0, 'must be at least 0'), z.maximum(MAX_PREVIOUS_SECRET_SECONDS, `must be at most ${MAX_PREVIOUS_SECRET_SECONDS}`)), DEFAULT_PREVIOUS_SECRET_SECONDS),
});

const instant = z.string().check(z.refine((value) => /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/.test(value) && !Number.isNaN(Date.parse(value)), { message: 'must be an ISO 8601 date or instant' }));
/** Ping takes no members (its body may be left out). */
export const pingSchema = z.strictObject({});

export const recoverSchema = z.strictObject({ since: instant, until: z.optional(instant) });

export function parseWebhookBody<Schema extends z.ZodMiniType>(schema: Schema, body: unknown): z.output<Schema> {
  const parsed = parseWith(schema, body ?? {});
  if (parsed.value === undefined) throw new InvalidRequest(parsed.issues);
  return parsed.value;
}

/** An instant without a zone is UTC, as list date filters are. */
export function instantOf(value: string): Date {
  return new Date(/Z|[+-]\d{2}:\d{2}$/.test(value) || !value.includes('T') ? value : `${value}Z`);
}
