import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { ApiAnswer, ApiCallOptions } from './api.ts';
import { call } from './api.ts';

/** Numbers the log-redaction test looks for: none may appear in any response or log line. */
export const CARD_NUMBER = '4111111111111111';
export const OTHER_CARD_NUMBER = '5555555555554444';
export const ECHECK_NUMBER = '987654321012';

export const CARD = { card_type: 'VISA', name_on_card: 'Ann Lee', account_number: CARD_NUMBER, expire_month: '12', expire_year: 2031, card_verification_value: '123' };
export const ECHECK = { account_holder: 'Ann Lee', account_number: ECHECK_NUMBER, routing_number: '021000021', account_type: 'Checking', sec_code: 'web' };
export const PAYPAL = { vendor_type: 'paypal', vendor_billing_agreement_token: 'BA-8A802366G0648845U' };

/** Fresh ids per test keep tests independent while sharing one runtime. */
export const unique = (prefix: string) => `${prefix}${randomBytes(8).toString('hex')}`;

export const locationPath = (org: string, loc: string) => `/v3/organizations/${org}/locations/${loc}`;
export const customerPath = (org: string, loc: string, cst: string) => `${locationPath(org, loc)}/customers/${cst}/paymethods`;

export async function post(path: string, body: unknown, options: ApiCallOptions = {}): Promise<ApiAnswer> {
  return call(path, { method: 'POST', body, ...options });
}

export async function createCard(org: string, loc: string, cst: string | undefined, extra: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const path = cst ? customerPath(org, loc, cst) : `${locationPath(org, loc)}/paymethods`;
  const answer = await post(path, { card: CARD, ...extra });
  expect(answer.status, answer.text).toBe(201);
  return answer.body;
}

export function expectError(answer: ApiAnswer, status: number, fields: string[] = []): void {
  expect(answer.status, answer.text).toBe(status);
  const response = (answer.body as { response: { response_code: string; response_desc: string; errors: Array<{ field?: string }> } }).response;
  expect(response.response_code).toMatch(/^[A-Z_]+$/);
  expect(response.response_desc).toMatch(/^Error\[1\]: /);
  for (const field of fields) expect(response.errors.map((error) => error.field)).toContain(field);
}

/** Typed views of list answers for assertions. */
export const resultsOf = (answer: { body: Record<string, unknown> }) => answer.body.results as Array<Record<string, unknown>>;
export const linksOf = (answer: { body: Record<string, unknown> }) => answer.body.links as Record<string, string | undefined>;
export const criteriaOf = (answer: { body: Record<string, unknown> }) =>
  answer.body.search_criteria as { page_size: number; page_index: number; home_organization_id: string; resource_specific: Record<string, string> };

/** The `errors` of an error answer. */
export const errorsOf = (answer: { body: Record<string, unknown> }) => (answer.body.response as { errors: Array<{ field?: string; message: string }> }).errors;
