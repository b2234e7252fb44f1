/** The shapes of the envelopes (shared/http/envelope.ts), for the OpenAPI document and the tests. */
import * as z from 'zod/mini';
import type { ResponseCode } from '#shared/platform/response-codes.ts';
import { ALL_RESPONSE_CODES, CODE_DETAILS } from '#shared/platform/response-codes.ts';
import type { ErrorEnvelope, SuccessDescription } from '../envelope.ts';

/** The codes an HTTP answer can carry (the catalogue's `api` surface). */
export const API_RESPONSE_CODES = ALL_RESPONSE_CODES.filter((code) => CODE_DETAILS[code].surface === 'api') as [ResponseCode, ...ResponseCode[]];

/** The error body of every error status, as the OpenAPI document describes it. */
export const errorEnvelopeSchema = z.object({
  response: z.object({
    environment: z.string().check(z.meta({ description: 'The configured environment name, for example live, sandbox or local.' })),
    response_code: z.enum(API_RESPONSE_CODES).check(z.meta({ description: 'Stable UPPER_SNAKE code from the catalogue (docs/error-codes.md); each answer lists the codes its status can carry.' })),
    response_desc: z.string().check(z.meta({ description: 'Every error joined as Error[1]: ... Error[2]: ...', examples: ['Error[1]: card.account_number must contain digits only'] })),
    errors: z
      .array(z.object({ field: z.optional(z.string()).check(z.meta({ description: 'Dotted path of the failing member, for example card.account_number.' })), message: z.string() }))
      .check(z.minLength(1), z.meta({ description: 'Every failing field (all of them); one item without field for errors that are not about a field.' })),
  }),
}) satisfies z.ZodMiniType<ErrorEnvelope>;

/** The `response` member of a success body. */
export function responseMemberSchema(description: SuccessDescription) {
  return z.object({
    environment: z.string().check(z.meta({ description: 'The configured environment name, for example live, sandbox or local.' })),
    response_desc: z.literal(description),
  });
}
