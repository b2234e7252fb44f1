/** The shapes of the record answers (shared/http/response.ts), for the OpenAPI document and the tests. */
import * as z from 'zod/mini';
import type { SuccessDescription } from '../envelope.ts';
import { responseMemberSchema } from './envelope.ts';

/** Absolute `/v3/...` URLs in `links`. */
export const linkSchema = z.url();
export const selfLinksSchema = z.object({ self: linkSchema });

/** The body recordResponse builds: the record's members, then `response` and `links`. */
export function recordEnvelopeSchema<Record extends z.ZodMiniObject, Links extends z.ZodMiniObject>(record: Record, description: SuccessDescription, links: Links) {
  return z.extend(record, { response: responseMemberSchema(description), links });
}

/** The body deleted() builds. */
export function deletedEnvelopeSchema<Record extends z.ZodMiniObject>(record: Record) {
  return z.extend(record, { response: responseMemberSchema('Delete Successful.') });
}
