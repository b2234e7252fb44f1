import type * as z from 'zod/mini';
import type { OneTimeToken, Paymethod, PaymethodType } from '#shared/domain/paymethods/model.ts';
import type { Page, PaymethodQuery } from '#shared/domain/paymethods/ports.ts';
import type { PaymethodAddress } from '#shared/domain/paymethods/read.ts';
import type { CreateForm, CreatePaymethodCommand } from '#shared/domain/paymethods/create.ts';
import { FINGERPRINT_PATTERN } from '#shared/domain/paymethods/fingerprints.ts';
import { PAYMETHOD_TYPES } from '#shared/domain/paymethods/rules.ts';
import { stripUndefined } from '#shared/domain/objects.ts';
import { routeNamed } from '../platform/routes.ts';
import type { FilterSpec, ListQuery } from './list-query.ts';
import { listLinks, listResponse } from './list-query.ts';
import type { ApiRequest } from './request.ts';
import { pathParams } from './request.ts';
import type { ApiResponse } from './response.ts';
import { created } from './response.ts';
import type { oneTimeTokenViewSchema, paymethodReadViewSchema, paymethodWriteViewSchema } from './schemas/paymethods.ts';

/**
 * How paymethods look on the wire. Records leave the repository without keys
 * or ciphertext, and their sub-objects hold only public members (masked
 * number, last four), so the views only choose which members each form shows.
 * Their schemas (schemas/paymethods.ts) describe the views for the OpenAPI
 * document; the views' return types are inferred from them, and the
 * integration tests parse real answers with them. They live apart so that
 * handlers, which only need the views, do not bundle zod.
 */

/**
 * `self` answers GET here (paymethods-get, or paymethods-get-organization for a
 * locationless record). The sub-collection links are the spec's and the
 * contract's: transactions, settlements and schedules belong to other services
 * of the same API, which answer them under the paymethod's path; this service
 * only names them.
 */
export function paymethodLinks(baseUrl: string, paymethod: Pick<Paymethod, 'organization_id' | 'location_id' | 'paymethod_token'>) {
  const org = `${baseUrl}/v3/organizations/${paymethod.organization_id}`;
  // Locationless records have no location path: their address is the organization-level one.
  const self = paymethod.location_id
    ? `${org}/locations/${paymethod.location_id}/paymethods/${paymethod.paymethod_token}`
    : `${org}/paymethods/${paymethod.paymethod_token}`;
  return { self, transactions: `${self}/transactions`, settlements: `${self}/settlements`, schedules: `${self}/schedules` };
}

/** The members every paymethod answer shows after its token and organization; the views decide those and `is_default`. */
function publicMembers(paymethod: Paymethod) {
  return {
    location_id: paymethod.location_id,
    customer_token: paymethod.customer_token,
    customer_id: paymethod.customer_id,
    billing_address_token: paymethod.billing_address_token,
    label: paymethod.label,
    notes: paymethod.notes,
    card: paymethod.card,
    echeck: paymethod.echeck,
    vendor: paymethod.vendor,
  };
}

/** Create and update answers: the spec's members (organization_id only for locationless records). */
export function paymethodWriteView(paymethod: Paymethod): z.output<typeof paymethodWriteViewSchema> {
  return stripUndefined({
    paymethod_token: paymethod.paymethod_token,
    organization_id: paymethod.location_id ? undefined : paymethod.organization_id,
    ...publicMembers(paymethod),
  });
}

/** Get and list answers: everything public, with `is_default` as the contract's "true"/"false". */
export function paymethodReadView(paymethod: Paymethod): z.output<typeof paymethodReadViewSchema> {
  return stripUndefined({
    paymethod_token: paymethod.paymethod_token,
    organization_id: paymethod.organization_id,
    ...publicMembers(paymethod),
    is_default: paymethod.is_default ? 'true' : 'false',
  });
}

/** A token's address: GET answers there until the token is used or expires (onetimetokens-get). */
export function oneTimeTokenLinks(baseUrl: string, token: Pick<OneTimeToken, 'organization_id' | 'location_id' | 'one_time_token'>) {
  return { self: `${baseUrl}${pathOf('onetimetokens-get', token)}` };
}

export function oneTimeTokenView(token: OneTimeToken): z.output<typeof oneTimeTokenViewSchema> {
  return stripUndefined({ one_time_token: token.one_time_token, expires_at: token.expires_at, card: token.card, echeck: token.echeck });
}

/**
 * The list envelope of the route `routeName`; `links.next` keeps the caller's
 * filters and page size and adds page_index+1 and the cursor.
 * `resourceSpecific` is what `search_criteria` echoes: the filters, and on the
 * customer list its path's location and customer too, as the spec shows.
 */
export function paymethodList(
  page: Page<Paymethod>,
  list: ListQuery<string>,
  request: Pick<ApiRequest, 'baseUrl' | 'pathParameters' | 'query' | 'caller'>,
  echo: { routeName: string; resourceSpecific: Readonly<Partial<Record<string, string>>> },
): ApiResponse {
  const next = page.nextCursor ? { pageIndex: list.pageIndex + 1, cursor: page.nextCursor } : undefined;
  return listResponse({
    results: page.items.map((paymethod) => ({ ...paymethodReadView(paymethod), links: paymethodLinks(request.baseUrl, paymethod) })),
    pageSize: list.pageSize,
    pageIndex: list.pageIndex,
    homeOrganizationId: request.caller!.organizationId,
    resourceSpecific: echo.resourceSpecific,
    links: listLinks(`${request.baseUrl}${pathOf(echo.routeName, request.pathParameters)}`, request.query, next),
  });
}

const LOCATION_ID: FilterSpec = { kind: 'string', pattern: /^loc_[A-Za-z0-9_-]{1,60}$/, description: 'loc_ followed by letters or digits', example: 'loc_1' };
const CUSTOMER_TOKEN: FilterSpec = {
  kind: 'string',
  pattern: /^cst_[A-Za-z0-9_-]{1,22}$/,
  description: 'cst_ followed by letters or digits, at most 26 characters',
  example: 'cst_1',
};

/** The spec's filters per list level; the customer list also narrows by the members that make sense there. */
export const CUSTOMER_LIST_FILTERS: Readonly<Record<string, FilterSpec>> = {
  customer_id: { kind: 'string', maxLength: 15, description: "the merchant's own customer string", example: 'C-1001' },
  paymethod_type: { kind: 'enum', values: PAYMETHOD_TYPES },
  start_au_updated_date: { kind: 'date', bound: 'start', range: 'au_updated' },
  end_au_updated_date: { kind: 'date', bound: 'end', range: 'au_updated' },
};
const FINGERPRINT: FilterSpec = {
  kind: 'string',
  pattern: FINGERPRINT_PATTERN,
  description: "a card's or echeck's fingerprint (fp_ and 43 characters); another organization's finds nothing",
  example: 'fp_3q2-7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
};
export const LOCATION_LIST_FILTERS: Readonly<Record<string, FilterSpec>> = { customer_token: CUSTOMER_TOKEN, ...CUSTOMER_LIST_FILTERS, fingerprint: FINGERPRINT };
export const ORGANIZATION_LIST_FILTERS: Readonly<Record<string, FilterSpec>> = { location_id: LOCATION_ID, ...LOCATION_LIST_FILTERS };

/** The list route's path (organization, and location and customer where it names them) plus parsed filters -> the repository's query. */
export function paymethodQuery(path: Readonly<Record<string, string>>, filters: Partial<Record<string, string>>): PaymethodQuery {
  return stripUndefined({
    organizationId: path.organization_id!,
    locationId: path.location_id ?? filters.location_id,
    customerToken: path.customer_token ?? filters.customer_token,
    customerId: filters.customer_id,
    paymethodType: filters.paymethod_type as PaymethodType | undefined,
    fingerprint: filters.fingerprint,
    auUpdatedFrom: filters.start_au_updated_date,
    auUpdatedTo: filters.end_au_updated_date,
  });
}

/**
 * The create routes differ only in their path, and so in the form the use
 * case validates: customer path, clientless location path, locationless
 * (organization_id in the body).
 */
export function paymethodCreateCommand(form: CreateForm, request: ApiRequest): CreatePaymethodCommand {
  const base = { caller: request.caller!, customerToken: request.pathParameters.customer_token, body: request.body ?? {} };
  if (form === 'locationless') return { ...base, form };
  const { organization_id: organizationId, location_id: locationId } = pathParams(request, 'organization_id', 'location_id');
  return { ...base, form, organizationId, locationId };
}

/** A create's answer, also what an Idempotency-Key replays: 201 with the record and its links. */
export function paymethodCreated(request: Pick<ApiRequest, 'baseUrl'>) {
  return (paymethod: Paymethod): ApiResponse => created(paymethodWriteView(paymethod), paymethodLinks(request.baseUrl, paymethod));
}

/**
 * The paymethod a record route's path names: at a location
 * (`.../locations/{location_id}/paymethods/{paymethod_token}`), or at the
 * organization-level path, which reaches a record of any location and the
 * locationless ones (whose `links.self` it is).
 */
export function paymethodAddressOf(request: Pick<ApiRequest, 'pathParameters'>): PaymethodAddress {
  const { organization_id: organizationId, location_id: locationId, paymethod_token: paymethodToken } = request.pathParameters;
  if (organizationId === undefined || paymethodToken === undefined) throw new Error('a paymethod record route names its organization and token');
  return { organizationId, ...(locationId !== undefined ? { locationId } : {}), paymethodToken };
}

/** The request's own path (`/v3/...`), rebuilt from its route template. */
export function pathOf(handlerName: string, parameters: Readonly<Record<string, string>>): string {
  return routeNamed(handlerName).path.replace(/\{(\w+)\}/g, (_match, name: string) => encodeURIComponent(parameters[name] ?? ''));
}
