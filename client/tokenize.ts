/**
 * Client-side tokenization: turns card or bank-account details typed into a
 * checkout page into a one-time token (`ott_...`, 60 minutes, single use) with a
 * publishable key, so the merchant's server only ever sees the token.
 *
 *   import { tokenize } from 'https://<api>/v3/js/tokenize.js';
 *   const { one_time_token } = await tokenize({ publishableKey, organizationId, locationId, card });
 *
 * No dependencies. It never logs, stores or caches what it is given: the details
 * go into one HTTPS request body and nowhere else.
 */

export const VERSION = '1.0.0';

export interface CardDetails {
  card_type: string;
  account_number: string;
  expire_month: string | number;
  expire_year: string | number;
  name_on_card?: string;
  card_verification_value?: string;
}

export interface EcheckDetails {
  account_number: string;
  routing_number: string;
  account_type: string;
  sec_code: string;
  account_holder?: string;
}

export interface TokenizeOptions {
  /** `pk_...`, bound to one organization, location and list of allowed origins. */
  publishableKey: string;
  organizationId: string;
  locationId: string;
  /** Exactly one of `card` and `echeck`. */
  card?: CardDetails;
  echeck?: EcheckDetails;
  /**
   * Where the API lives (`https://<api-id>.execute-api.<region>.amazonaws.com/<stage>`).
   * Default: the address this script was loaded from, which is right when it is
   * imported from `<api>/v3/js/tokenize.js`; give it when bundling the library.
   */
  baseUrl?: string;
  /** Sent as Idempotency-Key, so a retry after a lost answer returns the same token. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface TokenizeResult {
  one_time_token: string;
  /** ISO 8601. */
  expires_at: string;
  last_4_account_number: string;
}

export interface TokenizeErrorItem {
  field?: string;
  message: string;
}

/**
 * A refusal. `response_code` and `errors` are the API's (VALIDATION_ERROR with one
 * item per failing field, FORBIDDEN, THROTTLED, ...); failures without an answer
 * to read use INVALID_ARGUMENT, NETWORK_ERROR, ABORTED or UNEXPECTED_RESPONSE
 * with `status` 0. A browser cannot read an answer its CORS rules hide, so a key
 * that is unknown or not allowed on this origin surfaces as NETWORK_ERROR.
 */
export class TokenizeError extends Error {
  readonly status: number;
  readonly response_code: string;
  readonly errors: TokenizeErrorItem[];
  readonly retryAfterSeconds: number | undefined;

  constructor(status: number, responseCode: string, message: string, errors: TokenizeErrorItem[] = [{ message }], retryAfterSeconds?: number) {
    super(message);
    this.name = 'TokenizeError';
    this.status = status;
    this.response_code = responseCode;
    this.errors = errors;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export async function tokenize(options: TokenizeOptions): Promise<TokenizeResult> {
  const problem = argumentProblem(options);
  if (problem) throw new TokenizeError(0, 'INVALID_ARGUMENT', problem);
  const url = `${apiBase(options.baseUrl)}/v3/organizations/${encodeURIComponent(options.organizationId)}/locations/${encodeURIComponent(options.locationId)}/onetimetokens`;
  const headers: Record<string, string> = {
    Authorization: `Bearer ${options.publishableKey}`,
    'X-Service-Auth-Organization-Id': options.organizationId,
    'Content-Type': 'application/json',
    Accept: 'application/json',
  };
  if (options.idempotencyKey) headers['Idempotency-Key'] = options.idempotencyKey;
  const body = JSON.stringify(options.card ? { card: options.card } : { echeck: options.echeck });

  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers, body, mode: 'cors', credentials: 'omit', referrerPolicy: 'no-referrer', signal: options.signal });
  } catch (error) {
    if ((error as { name?: string } | null)?.name === 'AbortError') throw new TokenizeError(0, 'ABORTED', 'tokenization was aborted');
    throw new TokenizeError(0, 'NETWORK_ERROR', 'the tokenization request failed: network error, or refused for this origin or key');
  }

  let answer: unknown;
  try {
    answer = await response.json();
  } catch {
    answer = undefined;
  }
  if (response.status === 201 && isTokenAnswer(answer)) {
    const details = answer.card ?? answer.echeck;
    return { one_time_token: answer.one_time_token, expires_at: answer.expires_at, last_4_account_number: details?.last_4_account_number ?? '' };
  }
  const envelope = (answer as { response?: { response_code?: unknown; response_desc?: unknown; errors?: unknown } } | undefined)?.response;
  if (envelope && typeof envelope.response_code === 'string') {
    const errors = Array.isArray(envelope.errors) ? (envelope.errors as TokenizeErrorItem[]) : [];
    const retryAfter = Number(response.headers.get('Retry-After') ?? Number.NaN);
    return Promise.reject(
      new TokenizeError(
        response.status,
        envelope.response_code,
        typeof envelope.response_desc === 'string' ? envelope.response_desc : envelope.response_code,
        errors,
        Number.isFinite(retryAfter) ? retryAfter : undefined,
      ),
    );
  }
  throw new TokenizeError(response.status, 'UNEXPECTED_RESPONSE', `unexpected answer (HTTP ${response.status})`);
}

function argumentProblem(options: TokenizeOptions | undefined): string | undefined {
  if (!options || typeof options !== 'object') return 'tokenize() takes an options object';
  if (typeof options.publishableKey !== 'string' || !/^pk_[A-Za-z0-9]+$/.test(options.publishableKey)) return 'publishableKey must be a pk_... key';
  if (typeof options.organizationId !== 'string' || !options.organizationId.startsWith('org_')) return 'organizationId must be org_...';
  if (typeof options.locationId !== 'string' || !options.locationId.startsWith('loc_')) return 'locationId must be loc_...';
  if (!options.card === !options.echeck) return 'give exactly one of card and echeck';
  return undefined;
}

function apiBase(baseUrl: string | undefined): string {
  // This file is served at <base>/v3/js/tokenize.js.
  return (baseUrl ?? new URL('../../', import.meta.url).href).replace(/\/+$/, '');
}

interface TokenAnswer {
  one_time_token: string;
  expires_at: string;
  card?: { last_4_account_number?: string };
  echeck?: { last_4_account_number?: string };
}

function isTokenAnswer(value: unknown): value is TokenAnswer {
  const candidate = value as Partial<TokenAnswer> | undefined;
  return typeof candidate?.one_time_token === 'string' && typeof candidate.expires_at === 'string';
}
