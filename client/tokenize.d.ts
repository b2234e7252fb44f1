// Generated from client/tokenize.ts by `npm run build:client`; do not edit.
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
export declare const VERSION = "1.0.0";
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
export declare class TokenizeError extends Error {
    readonly status: number;
    readonly response_code: string;
    readonly errors: TokenizeErrorItem[];
    readonly retryAfterSeconds: number | undefined;
    constructor(status: number, responseCode: string, message: string, errors?: TokenizeErrorItem[], retryAfterSeconds?: number);
}
export declare function tokenize(options: TokenizeOptions): Promise<TokenizeResult>;
