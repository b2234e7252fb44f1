/** The shapes of the record answers (shared/http/response.ts), for the OpenAPI document and the tests. */
import { z } from 'zod';
import type { SuccessDescription } from '../envelope.ts';
import { responseMemberSchema } from './envelope.ts';

/** Absolute `/v3/...` URLs in `links`. */
export const linkSchema = z.url();
export const selfLinksSchema = z.object({ self: linkSchema });

/** The body recordResponse builds: the record's members, then `response` and `links`. */
export function recordEnvelopeSchema<Shape extends z.ZodRawShape, Links extends z.ZodObject>(record: z.ZodObject<Shape>, description: SuccessDescription, links: Links) {
  return record.extend({ response: responseMemberSchema(description), links });
}

/** The body deleted() builds. */
export function deletedEnvelopeSchema<Shape extends z.ZodRawShape>(record: z.ZodObject<Shape>) {
  return record.extend({ response: responseMemberSchema('Delete Successful.') });
}
