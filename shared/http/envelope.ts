import { z } from 'zod';
import { config } from '#shared/config.ts';
import type { FieldIssue } from '#shared/domain/errors.ts';
import { formatIssue } from '#shared/domain/errors.ts';

export type SuccessDescription = 'Create Successful.' | 'Get Successful.' | 'Update Successful.' | 'Delete Successful.';

export interface ErrorEnvelope {
  response: {
    environment: string;
    response_code: string;
    response_desc: string;
    errors: Array<{ field?: string; message: string }>;
  };
}

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

/**
 * `response_desc` joins every error in the `Error[1]: ... Error[2]: ...` form
 * existing clients display; `errors` carries the same items for machines.
 */
export function errorEnvelope(code: string, message: string, issues: readonly FieldIssue[] = []): ErrorEnvelope {
  const items = issues.length > 0 ? issues.map((issue) => ({ ...(issue.field ? { field: issue.field } : {}), message: issue.message })) : [{ message }];
  const texts = issues.length > 0 ? issues.map(formatIssue) : [message];
  return {
    response: {
      environment: config.environmentName,
      response_code: code,
      response_desc: texts.map((text, index) => `Error[${index + 1}]: ${text}`).join(' '),
      errors: items,
    },
  };
}

/** The `response` member of a success body. */
export function responseMemberSchema(description: SuccessDescription) {
  return z.object({
    environment: z.string().meta({ description: 'The configured environment name, for example live, sandbox or local.' }),
    response_desc: z.literal(description),
  });
}

export function responseMember(description: SuccessDescription): { environment: string; response_desc: SuccessDescription } {
  return { environment: config.environmentName, response_desc: description };
}
