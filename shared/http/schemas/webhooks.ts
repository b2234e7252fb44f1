/** The shapes of the webhook answers, for the views, the OpenAPI document and the tests. */
import * as z from 'zod/mini';

export const webhookEndpointViewSchema = z.object({
  webhook_endpoint_id: z.string().check(z.meta({ description: '`whe_` + 22 base62 characters.' })),
  organization_id: z.string(),
  url: z.string(),
  event_types: z.array(z.string()).check(z.meta({ description: 'Event types this endpoint receives, or `["*"]` for all.' })),
  description: z.optional(z.string()),
  status: z.enum(['enabled', 'disabled']),
  disabled_reason: z.optional(z.enum(['disabled_by_merchant', 'endpoint_gone', 'failing_for_five_days'])),
  created_at: z.string(),
  updated_at: z.string(),
});

export const webhookSecretSchema = z.object({
  secret: z.string().check(z.meta({ description: '`whsec_` + the base64 of 32 random bytes. Shown in this answer only.' })),
});

/** A create's answer: an Idempotency-Key replay of it leaves the secret out. */
export const webhookCreatedSecretSchema = z.object({
  secret: z.optional(z.string().check(z.meta({ description: '`whsec_` + the base64 of 32 random bytes. In this answer only: absent from an Idempotency-Key replay (roll_secret issues a new one).' }))),
});

export const webhookAttemptViewSchema = z.object({
  attempt_id: z.string(),
  message_id: z.string().check(z.meta({ description: 'The `webhook-id` header of the message.' })),
  event_type: z.string(),
  event_id: z.string(),
  attempted_at: z.string(),
  status_code: z.optional(z.int()),
  outcome: z.enum(['delivered', 'failed', 'timeout', 'refused']),
  duration_ms: z.int(),
  response_excerpt: z.optional(z.string().check(z.meta({ description: "The answer body's first 1,024 bytes, as text." }))),
});

export const webhookAcceptedSchema = z.object({
  webhook_endpoint_id: z.string(),
  messages: z.optional(z.int().check(z.meta({ description: 'recover: how many messages are sent again.' }))),
});
