/** The shapes of the envelopes (shared/http/envelope.ts), for the OpenAPI document and the tests. */
import { z } from 'zod';
import type { ErrorEnvelope, SuccessDescription } from '../envelope.ts';

/** The error body of every error status, as the OpenAPI document describes it. */
export const errorEnvelopeSchema = z.object({
  response: z.object({
    environment: z.string().meta({ description: 'The configured environment name, for example live, sandbox or local.' }),
    response_code: z.string().regex(/^[A-Z][A-Z0-9_]*$/).meta({ description: 'Stable UPPER_SNAKE code, for example VALIDATION_ERROR or NOT_FOUND.' }),
    response_desc: z.string().meta({ description: 'Every error joined as Error[1]: ... Error[2]: ...', examples: ['Error[1]: card.account_number must contain digits only'] }),
    errors: z
      .array(z.object({ field: z.string().optional().meta({ description: 'Dotted path of the failing member, for example card.account_number.' }), message: z.string() }))
      .min(1)
      .meta({ description: 'Every failing field (all of them); one item without field for errors that are not about a field.' }),
  }),
}) satisfies z.ZodType<ErrorEnvelope>;

/** The `response` member of a success body. */
export function responseMemberSchema(description: SuccessDescription) {
  return z.object({
    environment: z.string().meta({ description: 'The configured environment name, for example live, sandbox or local.' }),
    response_desc: z.literal(description),
  });
}
