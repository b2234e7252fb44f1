/**
 * The route table: the single source for the API Gateway resources in CDK, the
 * local runtime's router and the OpenAPI document. Nothing here imports handler
 * code, so the CDK app can read it without loading the AWS SDK. A new route
 * also needs its entry in route-schemas.ts (bodies, filters, answers), then
 * `npm run openapi` to regenerate docs/openapi.json.
 */
import type { ItemKind } from './item-kinds.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'OPTIONS';

/**
 * Who may call a route. `secret`: Basic credentials (servers). `publishable-or-secret`:
 * also a publishable key (`Authorization: Bearer pk_...`, browsers), limited to the
 * key's organization, location and allowed origins. `none`: public.
 */
export type RouteAuth = 'secret' | 'publishable-or-secret' | 'none';

/**
 * The request authorizer behind each authenticated kind: one per kind, so each
 * has its own decision cache, and a cached "allow" for a publishable key can never
 * serve a secret-only route. Both run the same code (functions/authorizer.ts).
 * Identity sources are the authorizer's cache key; API Gateway answers 401 without
 * calling it when one is missing. They are the Authorization header and the
 * caller's address: an answer for a failed attempt (401, or throttled, per address)
 * must not be served to the same headers from other addresses. The organization
 * header is not among them: a client sends ours or Forte's (organization-headers.ts),
 * and API Gateway would refuse a request missing either, so the authorizer answers
 * for the credentials alone and the shared middleware checks the organization header
 * against the caller on every request. Origin is not among them either: server-side
 * secret callers send none, so the authorizer's answer never depends on it, and the
 * origin is checked per request by the shared middleware from the key's allowed
 * origins the authorizer returns in its context.
 */
export const AUTHORIZERS: Readonly<Record<Exclude<RouteAuth, 'none'>, { readonly name: string; readonly identityHeaders: readonly string[]; readonly identityContext: readonly string[] }>> = {
  secret: { name: 'RequestAuthorizer', identityHeaders: ['Authorization'], identityContext: ['identity.sourceIp'] },
  'publishable-or-secret': { name: 'PublishableKeyAuthorizer', identityHeaders: ['Authorization'], identityContext: ['identity.sourceIp'] },
};

/** What a route's function may touch. CDK turns each entry into the narrowest grant. */
export interface RouteAccess {
  /** Single table: `read` grants GetItem/Query/BatchGetItem, `write` adds Put/Update/Delete/TransactWrite on the items of `writes`. */
  table?: 'read' | 'write';
  /** The kinds of items a `write` function writes: its write grant covers their partition keys only (shared/platform/dynamodb-grants.ts). */
  writes?: readonly ItemKind[];
  /** Vault key usages for account numbers. A route that only reads never decrypts. */
  vault?: ReadonlyArray<'encrypt' | 'decrypt'>;
  /** Documents bucket usages. */
  documents?: ReadonlyArray<'read' | 'write' | 'delete' | 'delete-upload' | 'list-copies' | 'presign-upload' | 'finalize-upload' | 'retain' | 'purge-infected'>;
  /** Calls the PayPal billing-agreement port. */
  paypal?: boolean;
  /** Computes paymethod fingerprints (kms:GenerateMac on the fingerprint key). */
  fingerprint?: boolean;
  /**
   * Remembers where list pages start (shared/store/page-boundaries.ts), so a bare
   * page_index costs about one page: BatchWriteItem on `PAGE#...` items only.
   */
  pageBoundaries?: boolean;
  /**
   * The webhook deliveries table (lanes, settled messages, attempts, slots, parked messages; shared/platform/table.ts):
   * reads it, writes the item kinds of `writes`, and with `parks` parks messages in batches (BatchWriteItem on
   * `WHP#...` items only).
   */
  webhookDeliveries?: { readonly writes?: readonly ItemKind[]; readonly parks?: boolean };
  /** Checks webhook endpoint URLs (registration, delivery): the URL policy's settings reach its environment. */
  webhookUrls?: boolean;
}

export interface RouteDefinition {
  /** Kebab-case name of the handler module in `functions/` and of the Lambda function. */
  readonly handler: string;
  readonly method: HttpMethod;
  /** Path template under `/v3`; `{name}` segments are path parameters (see PATH_PARAMETER_PREFIXES). */
  readonly path: string;
  /** See RouteAuth. */
  readonly auth: RouteAuth;
  /** Refused with 413 above this many body bytes (checked by the handler; API Gateway only caps at 10 MB). */
  readonly maxBodyBytes?: number;
  /** A POST whose JSON body may be left out (taken as `{}`): an action whose members all have defaults. */
  readonly optionalBody?: boolean;
  /** multipart/form-data bodies arrive base64-encoded (API Gateway binary media type). */
  readonly binaryBody?: boolean;
  /**
   * The query parameters the route takes: `list` for a list route (its handler
   * parses page_size, page_index, cursor, filter and its filters, list-query.ts),
   * else the names it reads, each with its description for the OpenAPI
   * document; none when absent. Any other name is 400.
   */
  readonly query?: 'list' | Readonly<Record<string, string>>;
  readonly access: RouteAccess;
  readonly summary: string;
}

/** What one path parameter may hold: its prefix, then letters, digits, `_` or `-`, at most `maxLength` characters in all. */
export interface PathParameterSpec {
  readonly prefix: string;
  readonly maxLength: number;
}

/**
 * Every path parameter of the route table, one spec each, checked the same
 * way on every route (request.ts): a segment without its prefix, with another
 * character, or longer than any value of its kind can be, names no record, so
 * the route answers 404, a list as much as a create. Tokens are 26 characters
 * (the contract); organization ids are `org_` and up to 60 more (ids.ts);
 * location ids are the merchant's own, bounded as organization ids are.
 */
export const PATH_PARAMETERS = {
  organization_id: { prefix: 'org_', maxLength: 64 },
  location_id: { prefix: 'loc_', maxLength: 64 },
  customer_token: { prefix: 'cst_', maxLength: 26 },
  paymethod_token: { prefix: 'mth_', maxLength: 26 },
  document_id: { prefix: 'doc_', maxLength: 26 },
  one_time_token: { prefix: 'ott_', maxLength: 26 },
  webhook_endpoint_id: { prefix: 'whe_', maxLength: 26 },
} as const satisfies Readonly<Record<string, PathParameterSpec>>;

export type PathParameterName = keyof typeof PATH_PARAMETERS;

/** The prefixes alone, as the OpenAPI document and tests read them. */
export const PATH_PARAMETER_PREFIXES: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(PATH_PARAMETERS).map(([name, spec]) => [name, spec.prefix]),
);

/** The spec of a path parameter; undefined for a name the table does not know (a route table test forbids those). */
export function pathParameterSpec(name: string): PathParameterSpec | undefined {
  return Object.hasOwn(PATH_PARAMETERS, name) ? PATH_PARAMETERS[name as PathParameterName] : undefined;
}

/** A paymethod's commits: the record, its duplicate-scope entry, and its customer's default pointer. */
const PAYMETHOD_WRITES: readonly ItemKind[] = ['paymethod', 'duplicateScope', 'customerDefault'];
/** A create also consumes the one-time token it was made from, and remembers its idempotency key. */
const PAYMETHOD_CREATE_WRITES: readonly ItemKind[] = [...PAYMETHOD_WRITES, 'oneTimeToken', 'idempotency'];

const DOCUMENTS = '/v3/organizations/{organization_id}/documents';
const WEBHOOK_ENDPOINTS = '/v3/organizations/{organization_id}/webhook_endpoints';
const WEBHOOK_ENDPOINT = `${WEBHOOK_ENDPOINTS}/{webhook_endpoint_id}`;
const DOCUMENT = `${DOCUMENTS}/{document_id}`;

export const routes: readonly RouteDefinition[] = [
  // Paymethods. Creates encrypt (and decrypt, to re-seal a one-time token's number under the new paymethod).
  {
    handler: 'paymethods-create-customer',
    method: 'POST',
    path: '/v3/organizations/{organization_id}/locations/{location_id}/customers/{customer_token}/paymethods',
    auth: 'secret',
    access: { table: 'write', writes: PAYMETHOD_CREATE_WRITES, vault: ['encrypt', 'decrypt'], paypal: true, fingerprint: true },
    summary: "Create a customer's paymethod",
  },
  {
    handler: 'paymethods-create-location',
    method: 'POST',
    path: '/v3/organizations/{organization_id}/locations/{location_id}/paymethods',
    auth: 'secret',
    access: { table: 'write', writes: PAYMETHOD_CREATE_WRITES, vault: ['encrypt', 'decrypt'], paypal: true, fingerprint: true },
    summary: 'Create a paymethod at a location',
  },
  {
    handler: 'paymethods-create-locationless',
    method: 'POST',
    path: '/v3/customers/{customer_token}/paymethods',
    auth: 'secret',
    access: { table: 'write', writes: PAYMETHOD_CREATE_WRITES, vault: ['encrypt'], paypal: true, fingerprint: true },
    summary: 'Create a locationless paymethod',
  },
  {
    handler: 'paymethods-get',
    method: 'GET',
    path: '/v3/organizations/{organization_id}/locations/{location_id}/paymethods/{paymethod_token}',
    auth: 'secret',
    access: { table: 'read' },
    summary: 'Get one paymethod of a location',
  },
  {
    handler: 'paymethods-update',
    method: 'PUT',
    path: '/v3/organizations/{organization_id}/locations/{location_id}/paymethods/{paymethod_token}',
    auth: 'secret',
    // An echeck's new routing number: its number is opened to compute its fingerprint again.
    access: { table: 'write', writes: PAYMETHOD_WRITES, vault: ['decrypt'], fingerprint: true },
    summary: 'Update a paymethod',
  },
  {
    handler: 'paymethods-delete',
    method: 'DELETE',
    path: '/v3/organizations/{organization_id}/locations/{location_id}/paymethods/{paymethod_token}',
    auth: 'secret',
    access: { table: 'write', writes: PAYMETHOD_WRITES },
    summary: 'Delete a paymethod and its ciphertext',
  },
  {
    handler: 'paymethods-get-organization',
    method: 'GET',
    path: '/v3/organizations/{organization_id}/paymethods/{paymethod_token}',
    auth: 'secret',
    access: { table: 'read' },
    summary: 'Get a paymethod of an organization',
  },
  {
    handler: 'paymethods-update-organization',
    method: 'PUT',
    path: '/v3/organizations/{organization_id}/paymethods/{paymethod_token}',
    auth: 'secret',
    // As paymethods-update: the one path a locationless record has (its links.self).
    access: { table: 'write', writes: PAYMETHOD_WRITES, vault: ['decrypt'], fingerprint: true },
    summary: 'Update a paymethod of an organization',
  },
  {
    handler: 'paymethods-delete-organization',
    method: 'DELETE',
    path: '/v3/organizations/{organization_id}/paymethods/{paymethod_token}',
    auth: 'secret',
    access: { table: 'write', writes: PAYMETHOD_WRITES },
    summary: 'Delete a paymethod of an organization',
  },
  {
    handler: 'paymethods-list-customer',
    method: 'GET',
    path: '/v3/organizations/{organization_id}/locations/{location_id}/customers/{customer_token}/paymethods',
    auth: 'secret',
    query: 'list',
    access: { table: 'read', pageBoundaries: true },
    summary: "List a customer's paymethods at a location",
  },
  {
    handler: 'paymethods-list-location',
    method: 'GET',
    path: '/v3/organizations/{organization_id}/locations/{location_id}/paymethods',
    auth: 'secret',
    query: 'list',
    access: { table: 'read', pageBoundaries: true },
    summary: "List a location's paymethods",
  },
  {
    handler: 'paymethods-list-organization',
    method: 'GET',
    path: '/v3/organizations/{organization_id}/paymethods',
    auth: 'secret',
    query: 'list',
    access: { table: 'read', pageBoundaries: true },
    summary: "List an organization's paymethods",
  },
  {
    handler: 'onetimetokens-create',
    method: 'POST',
    path: '/v3/organizations/{organization_id}/locations/{location_id}/onetimetokens',
    // Browsers mint with a publishable key (client-side tokenization); servers with their secret credentials.
    auth: 'publishable-or-secret',
    maxBodyBytes: 4096,
    // Write: the per-key minting counter lives in the table too. No fingerprint: a token is not a stored number (docs/vault.md).
    access: { table: 'write', writes: ['oneTimeToken', 'mintCounter', 'idempotency'], vault: ['encrypt'] },
    summary: 'Mint a one-time token for a card or echeck',
  },
  {
    handler: 'onetimetokens-get',
    method: 'GET',
    path: '/v3/organizations/{organization_id}/locations/{location_id}/onetimetokens/{one_time_token}',
    // The address a mint answers with (links.self, Location). Servers only: a browser never needs to read a token back.
    auth: 'secret',
    access: { table: 'read' },
    summary: 'Get a one-time token',
  },

  // Documents.
  {
    handler: 'documents-create',
    method: 'POST',
    path: DOCUMENTS,
    auth: 'secret',
    binaryBody: true,
    // `delete` removes the stored object again when the record cannot be written.
    access: { table: 'write', writes: ['document', 'documentHash', 'idempotency'], documents: ['write', 'delete'] },
    summary: 'Upload a document',
  },
  {
    handler: 'documents-list',
    method: 'GET',
    path: DOCUMENTS,
    auth: 'secret',
    query: 'list',
    access: { table: 'read', pageBoundaries: true },
    summary: "List an organization's documents",
  },
  {
    handler: 'documents-create-upload',
    method: 'POST',
    path: `${DOCUMENTS}/uploads`,
    auth: 'secret',
    access: { table: 'write', writes: ['document', 'idempotency'], documents: ['presign-upload'] },
    summary: 'Open an upload session for a large file',
  },
  {
    handler: 'documents-get',
    method: 'GET',
    path: DOCUMENT,
    auth: 'secret',
    access: { table: 'read' },
    summary: 'Get a document',
  },
  {
    handler: 'documents-update',
    method: 'PUT',
    path: DOCUMENT,
    auth: 'secret',
    // The stored file's Object Lock follows the record's legal_hold and retain_until.
    access: { table: 'write', writes: ['document'], documents: ['retain'] },
    summary: 'Set a legal hold or extend retention',
  },
  {
    handler: 'documents-delete',
    method: 'DELETE',
    path: DOCUMENT,
    auth: 'secret',
    access: { table: 'write', writes: ['document', 'documentHash'], documents: ['delete', 'delete-upload', 'list-copies'] },
    summary: 'Delete a document and its file',
  },
  {
    handler: 'documents-download',
    method: 'GET',
    path: `${DOCUMENT}/file`,
    auth: 'secret',
    // Presigned URLs are signed with the function's own credentials, so it needs s3:GetObject.
    access: { table: 'read', documents: ['read'] },
    summary: "Download a document's file",
  },

  // Webhook endpoints (docs/webhooks.md). Secrets are sealed under the vault key, bound to the organization and the endpoint.
  {
    handler: 'webhooks-create',
    method: 'POST',
    path: WEBHOOK_ENDPOINTS,
    auth: 'secret',
    maxBodyBytes: 8192,
    access: { table: 'write', writes: ['webhookEndpoint', 'idempotency'], vault: ['encrypt'], webhookUrls: true },
    summary: 'Create a webhook endpoint',
  },
  {
    handler: 'webhooks-list',
    method: 'GET',
    path: WEBHOOK_ENDPOINTS,
    auth: 'secret',
    query: 'list',
    access: { table: 'read' },
    summary: 'List webhook endpoints',
  },
  {
    handler: 'webhooks-get',
    method: 'GET',
    path: WEBHOOK_ENDPOINT,
    auth: 'secret',
    access: { table: 'read' },
    summary: 'Get a webhook endpoint',
  },
  {
    handler: 'webhooks-update',
    method: 'PUT',
    path: WEBHOOK_ENDPOINT,
    auth: 'secret',
    maxBodyBytes: 8192,
    access: { table: 'write', writes: ['webhookEndpoint'], webhookUrls: true },
    summary: 'Update a webhook endpoint',
  },
  {
    handler: 'webhooks-delete',
    method: 'DELETE',
    path: WEBHOOK_ENDPOINT,
    auth: 'secret',
    access: { table: 'write', writes: ['webhookEndpoint'] },
    summary: 'Delete a webhook endpoint',
  },
  {
    handler: 'webhooks-ping',
    method: 'POST',
    optionalBody: true,
    path: `${WEBHOOK_ENDPOINT}/ping`,
    auth: 'secret',
    maxBodyBytes: 1024,
    access: { table: 'read', webhookDeliveries: { writes: ['webhookLane'] } },
    summary: 'Send a test ping to an endpoint',
  },
  {
    handler: 'webhooks-roll-secret',
    method: 'POST',
    optionalBody: true,
    path: `${WEBHOOK_ENDPOINT}/roll_secret`,
    auth: 'secret',
    maxBodyBytes: 1024,
    access: { table: 'write', writes: ['webhookEndpoint'], vault: ['encrypt'] },
    summary: "Roll an endpoint's signing secret",
  },
  {
    handler: 'webhooks-recover',
    method: 'POST',
    path: `${WEBHOOK_ENDPOINT}/recover`,
    auth: 'secret',
    maxBodyBytes: 1024,
    access: { table: 'read', webhookDeliveries: { writes: ['webhookLane', 'webhookHeld'] } },
    summary: 'Resend failed and held messages',
  },
  {
    handler: 'webhooks-attempts',
    method: 'GET',
    path: `${WEBHOOK_ENDPOINT}/attempts`,
    auth: 'secret',
    query: 'list',
    access: { table: 'read', webhookDeliveries: {} },
    summary: "List an endpoint's delivery attempts",
  },

  // Client-side tokenization.
  {
    handler: 'onetimetokens-preflight',
    method: 'OPTIONS',
    path: '/v3/organizations/{organization_id}/locations/{location_id}/onetimetokens',
    // A CORS preflight carries no credentials; it reads the location's publishable keys' origins.
    auth: 'none',
    access: { table: 'read' },
    summary: 'CORS preflight for browser minting',
  },
  {
    handler: 'tokenize-js',
    method: 'GET',
    path: '/v3/js/tokenize.js',
    auth: 'none',
    query: { v: 'The version to pin (the content hash the demo page names): that URL is cached for a year, the bare one for five minutes.' },
    access: {},
    summary: 'Get the tokenization library',
  },

  // The API's own description (shared/http/openapi.ts), public.
  {
    handler: 'openapi-get',
    method: 'GET',
    path: '/v3/openapi.json',
    auth: 'none',
    access: {},
    summary: 'This API as an OpenAPI 3.1 document',
  },
];

/** The route a handler serves; throws for a handler name the table does not know. */
export function routeNamed(handlerName: string): RouteDefinition {
  const route = routes.find((candidate) => candidate.handler === handlerName);
  if (!route) throw new Error(`No route in the route table uses handler ${handlerName}`);
  return route;
}

/** Body size API Gateway REST accepts before any Lambda runs. */
export const API_GATEWAY_MAX_REQUEST_BYTES = 10 * 1024 * 1024;
/** Lambda's synchronous invocation payload cap; the whole proxy event (base64 body included) counts. */
export const LAMBDA_MAX_PAYLOAD_BYTES = 6 * 1024 * 1024;
/** API Gateway REST integration timeout. */
export const API_GATEWAY_TIMEOUT_MS = 29_000;
/** API Gateway's limit on the total size of request headers. */
export const API_GATEWAY_MAX_HEADER_BYTES = 10_240;
