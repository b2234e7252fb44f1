import { config } from '#shared/runtime/config.ts';
import type { FieldIssue } from '#shared/domain/errors.ts';
import { formatIssue } from '#shared/domain/errors.ts';
import type { ResponseCode } from '#shared/platform/response-codes.ts';

/** `Request Accepted.` answers a 202: the work it asked for (a webhook ping or recovery) happens after the answer. */
export type SuccessDescription = 'Create Successful.' | 'Get Successful.' | 'Update Successful.' | 'Delete Successful.' | 'Request Accepted.';

export interface ErrorEnvelope {
  response: {
    environment: string;
    response_code: ResponseCode;
    response_desc: string;
    errors: Array<{ field?: string; message: string }>;
  };
}

/**
 * `response_desc` joins every error in the `Error[1]: ... Error[2]: ...` form
 * existing clients display; `errors` carries the same items for machines.
 */
export function errorEnvelope(code: ResponseCode, message: string, issues: readonly FieldIssue[] = []): ErrorEnvelope {
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

export function responseMember(description: SuccessDescription): { environment: string; response_desc: SuccessDescription } {
  return { environment: config.environmentName, response_desc: description };
}
