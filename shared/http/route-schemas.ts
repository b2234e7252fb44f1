/**
 * What the OpenAPI document says about each route beyond the route table:
 * request bodies, list filters and answers, keyed by handler name. Only the
 * generator (openapi.ts) and tests import this module, so the route table stays
 * free of domain code. Every schema here is the one the code uses: request
 * bodies are the validators' zod schemas, list filters the declarations the
 * handlers parse with, answers the schemas of the views (their return types are
 * inferred from them).
 *
 * Adding a route: add its entry below (a unit test fails while one is missing),
 * then run `npm run openapi`.
 */
import * as z from 'zod/mini';
import { documentListViewSchema, documentViewSchema, uploadFormSchema } from './schemas/documents.ts';
import { UPLOAD_CONTENT_TYPES } from '#shared/domain/documents/file-type.ts';
import { uploadMetadataSchema, uploadSessionSchema } from '#shared/domain/documents/validation.ts';
import { createBodySchema, locationlessCreateBodySchema, oneTimeTokenSchema, updateBodySchema } from '#shared/domain/paymethods/validation.ts';
import { MAX_FILE_BYTES } from '#shared/domain/documents/document.ts';
import { DOCUMENT_LIST_FILTERS } from './documents.ts';
import { errorEnvelopeSchema } from './schemas/envelope.ts';
import type { FilterSpec } from './list-query.ts';
import { listEnvelopeSchema } from './schemas/list.ts';
import { CUSTOMER_LIST_FILTERS, LOCATION_LIST_FILTERS, ORGANIZATION_LIST_FILTERS } from './paymethods.ts';
import {
  cardViewSchema,
  echeckViewSchema,
  oneTimeTokenViewSchema,
  paymethodLinksSchema,
  paymethodReadViewSchema,
  paymethodWriteViewSchema,
  vendorViewSchema,
} from './schemas/paymethods.ts';
import { deletedEnvelopeSchema, recordEnvelopeSchema, selfLinksSchema } from './schemas/response.ts';
import type { ResponseCode } from '#shared/platform/response-codes.ts';
import { endpointCreateSchema, endpointUpdateSchema, pingSchema, recoverSchema, rollSecretSchema } from '#shared/domain/webhooks/validation.ts';
import { webhookAcceptedSchema, webhookAttemptViewSchema, webhookCreatedSecretSchema, webhookEndpointViewSchema, webhookSecretSchema } from './schemas/webhooks.ts';


export type RequestBody =
  | { readonly kind: 'json'; readonly schema: z.ZodMiniType }
  | {
      readonly kind: 'multipart';
      /** The JSON part, sent first with Content-Type application/json. */
      readonly metadata: z.ZodMiniType;
      /** Content-Types the file part may declare. */
      readonly fileContentTypes: readonly string[];
      readonly maxFileBytes: number;
    };

export interface ResponseHeader {
  readonly description: string;
  readonly example?: string;
}

export interface SuccessResponse {
  readonly status: 200 | 201 | 202 | 204 | 302;
  readonly description: string;
  /** The JSON body; absent for bodiless answers (redirects, preflights). */
  readonly schema?: z.ZodMiniType;
  /** A body that is not JSON (the tokenization script): its media type, described as a string. */
  readonly text?: { readonly mediaType: string; readonly description: string };
  /** Headers beyond X-Request-Id (every answer) and Location (every 201). */
  readonly headers?: Readonly<Record<string, ResponseHeader>>;
}

export interface RouteSchemas {
  readonly request?: RequestBody;
  /** A list route's filters, as its handler parses them; the generator adds filter, page_size, page_index and cursor. */
  readonly listFilters?: Readonly<Record<string, FilterSpec>>;
  readonly response: SuccessResponse;
  /** Response codes beyond those the route's shape implies (see errorCodes in openapi.ts); each brings its status. */
  readonly errors?: readonly ResponseCode[];
  /** The route revalidates with If-None-Match: a 304 without a body, with this description. */
  readonly notModified?: string;
  /** Longer description of the operation (CommonMark). */
  readonly description?: string;
}

/** Request bodies, by component name (io: input). A body used by an entry but not named here is named after its route. */
export const requestSchemas: Readonly<Record<string, z.ZodMiniType>> = {
  PaymethodCreate: createBodySchema,
  PaymethodCreateLocationless: locationlessCreateBodySchema,
  WebhookEndpointCreate: endpointCreateSchema,
  WebhookEndpointUpdate: endpointUpdateSchema,
  WebhookRollSecret: rollSecretSchema,
  WebhookRecover: recoverSchema,
  PaymethodUpdate: updateBodySchema,
  OneTimeTokenCreate: oneTimeTokenSchema,
  DocumentUploadMetadata: uploadMetadataSchema,
  DocumentUploadSessionCreate: uploadSessionSchema,
};

const paymethodCreated = recordEnvelopeSchema(paymethodWriteViewSchema, 'Create Successful.', paymethodLinksSchema);
const paymethodUpdated = recordEnvelopeSchema(paymethodWriteViewSchema, 'Update Successful.', paymethodLinksSchema);
const paymethodFetched = recordEnvelopeSchema(paymethodReadViewSchema, 'Get Successful.', paymethodLinksSchema);
// The organization list's filters include every other list's, and the location and customer the customer list echoes.
const paymethodList = listEnvelopeSchema(z.extend(paymethodReadViewSchema, { links: paymethodLinksSchema }), Object.keys(ORGANIZATION_LIST_FILTERS));
const paymethodDeleted = deletedEnvelopeSchema(z.object({ paymethod_token: paymethodReadViewSchema.shape.paymethod_token }));
const oneTimeTokenCreated = recordEnvelopeSchema(oneTimeTokenViewSchema, 'Create Successful.', selfLinksSchema);
const oneTimeTokenFetched = recordEnvelopeSchema(oneTimeTokenViewSchema, 'Get Successful.', selfLinksSchema);
const documentCreated = recordEnvelopeSchema(documentViewSchema, 'Create Successful.', selfLinksSchema);
const uploadSessionCreated = recordEnvelopeSchema(z.extend(documentViewSchema, { upload: uploadFormSchema }), 'Create Successful.', selfLinksSchema);
const documentFetched = recordEnvelopeSchema(documentViewSchema, 'Get Successful.', selfLinksSchema);
const documentList = listEnvelopeSchema(documentListViewSchema, Object.keys(DOCUMENT_LIST_FILTERS));
const documentDeleted = deletedEnvelopeSchema(z.object({ document_id: documentViewSchema.shape.document_id }));
/** Only the members the document must have: the generator's own output is checked by the unit tests. */
const webhookEndpointWithLinks = z.extend(webhookEndpointViewSchema, { links: selfLinksSchema });
const webhookEndpointCreated = recordEnvelopeSchema(z.extend(webhookEndpointViewSchema, webhookCreatedSecretSchema.shape), 'Create Successful.', selfLinksSchema);
const webhookEndpointFetched = recordEnvelopeSchema(webhookEndpointViewSchema, 'Get Successful.', selfLinksSchema);
const webhookEndpointUpdated = recordEnvelopeSchema(webhookEndpointViewSchema, 'Update Successful.', selfLinksSchema);
const webhookSecretRolled = recordEnvelopeSchema(
  z.extend(webhookEndpointViewSchema, { ...webhookSecretSchema.shape, previous_secret_expires_at: z.optional(z.string().check(z.meta({ description: 'Until then deliveries carry both signatures.' }))) }),
  'Update Successful.',
  selfLinksSchema,
);
const webhookEndpointList = listEnvelopeSchema(webhookEndpointWithLinks, []);
const webhookEndpointDeleted = deletedEnvelopeSchema(z.object({ webhook_endpoint_id: webhookEndpointViewSchema.shape.webhook_endpoint_id }));
const webhookAccepted = recordEnvelopeSchema(webhookAcceptedSchema, 'Request Accepted.', selfLinksSchema);
const webhookAttemptList = listEnvelopeSchema(webhookAttemptViewSchema, []);

const openApiDocumentSchema = z.looseObject({
  openapi: z.literal('3.1.0'),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.unknown()),
});

/**
 * Answer bodies and the shapes they share, by component name (io: output).
 * Naming a schema that others embed (Card) makes the document refer to it.
 */
export const responseSchemas: Readonly<Record<string, z.ZodMiniType>> = {
  ErrorEnvelope: errorEnvelopeSchema,
  Card: cardViewSchema,
  Echeck: echeckViewSchema,
  Vendor: vendorViewSchema,
  PaymethodLinks: paymethodLinksSchema,
  PaymethodCreated: paymethodCreated,
  PaymethodUpdated: paymethodUpdated,
  Paymethod: paymethodFetched,
  PaymethodList: paymethodList,
  PaymethodDeleted: paymethodDeleted,
  OneTimeTokenCreated: oneTimeTokenCreated,
  OneTimeToken: oneTimeTokenFetched,
  DocumentCreated: documentCreated,
  DocumentUploadSessionCreated: uploadSessionCreated,
  Document: documentFetched,
  DocumentList: documentList,
  DocumentDeleted: documentDeleted,
  WebhookEndpointCreated: webhookEndpointCreated,
  WebhookEndpoint: webhookEndpointFetched,
  WebhookEndpointUpdated: webhookEndpointUpdated,
  WebhookSecretRolled: webhookSecretRolled,
  WebhookEndpointList: webhookEndpointList,
  WebhookEndpointDeleted: webhookEndpointDeleted,
  WebhookAccepted: webhookAccepted,
  WebhookAttemptList: webhookAttemptList,
  OpenApiDocument: openApiDocumentSchema,
};

/**
 * A create may redeem a one-time token, call PayPal, find the card or echeck already on file (fail_on_duplicate),
 * and attach to a customer that another request changes meanwhile.
 */
const PAYMETHOD_CREATE_ERRORS: readonly ResponseCode[] = ['INVALID_ONE_TIME_TOKEN', 'ONE_TIME_TOKEN_USED', 'DUPLICATE_PAYMETHOD', 'VENDOR_REFUSED', 'CONCURRENT_MODIFICATION'];

const CREATE_DESCRIPTION =
  'Exactly one of card, echeck or vendor (vendors is accepted as its alias). A card or echeck may instead carry a one_time_token '
  + 'minted for the same organization and location; members sent beside it (name_on_card, account_holder) override the token\'s. '
  + "With fail_on_duplicate, a card or echeck the customer (or, without one, the location's paymethods without a customer) already has "
  + 'is 409 DUPLICATE_PAYMETHOD: errors names card.account_number or echeck.account_number, response_desc the existing mth_ token; '
  + 'nothing is created and no one-time token is consumed.';

export const routeSchemas: Readonly<Record<string, RouteSchemas>> = {
  'paymethods-create-customer': {
    request: { kind: 'json', schema: createBodySchema },
    response: { status: 201, description: "The paymethod, attached to the path's customer.", schema: paymethodCreated },
    errors: PAYMETHOD_CREATE_ERRORS,
    description: `${CREATE_DESCRIPTION} The first paymethod of a customer becomes its default.`,
  },
  'paymethods-create-location': {
    request: { kind: 'json', schema: createBodySchema },
    response: { status: 201, description: 'The paymethod (clientless, or attached to the body customer_token).', schema: paymethodCreated },
    errors: PAYMETHOD_CREATE_ERRORS,
    description: CREATE_DESCRIPTION,
  },
  'paymethods-create-locationless': {
    request: { kind: 'json', schema: locationlessCreateBodySchema },
    response: { status: 201, description: 'The locationless paymethod.', schema: paymethodCreated },
    errors: ['DUPLICATE_PAYMETHOD', 'VENDOR_REFUSED', 'CONCURRENT_MODIFICATION'],
    description:
      "The body names the organization (organization_id): one the caller may act on, or 403. One-time tokens are not accepted here (400).",
  },
  'paymethods-get': {
    response: { status: 200, description: 'The paymethod.', schema: paymethodFetched },
  },
  'paymethods-update': {
    request: { kind: 'json', schema: updateBodySchema },
    response: { status: 200, description: 'The updated paymethod.', schema: paymethodUpdated },
    errors: ['CONCURRENT_MODIFICATION'],
  },
  'paymethods-delete': {
    response: { status: 200, description: 'The paymethod and its ciphertext are gone.', schema: paymethodDeleted },
    errors: ['CONCURRENT_MODIFICATION'],
  },
  'paymethods-update-organization': {
    request: { kind: 'json', schema: updateBodySchema },
    response: { status: 200, description: 'The updated paymethod.', schema: paymethodUpdated },
    errors: ['CONCURRENT_MODIFICATION'],
    description: 'As the update at the location path, for a paymethod of any location of the organization, or of none: the one path a locationless paymethod has.',
  },
  'paymethods-delete-organization': {
    response: { status: 200, description: 'The paymethod and its ciphertext are gone.', schema: paymethodDeleted },
    errors: ['CONCURRENT_MODIFICATION'],
    description: 'As the delete at the location path, for a paymethod of any location of the organization, or of none: the one path a locationless paymethod has.',
  },
  'paymethods-get-organization': {
    response: { status: 200, description: 'The paymethod, whichever location it belongs to (or none).', schema: paymethodFetched },
  },
  'paymethods-list-customer': {
    listFilters: CUSTOMER_LIST_FILTERS,
    response: { status: 200, description: "The customer's paymethods at the location, newest first.", schema: paymethodList },
  },
  'paymethods-list-location': {
    listFilters: LOCATION_LIST_FILTERS,
    response: { status: 200, description: "The location's paymethods, newest first.", schema: paymethodList },
  },
  'paymethods-list-organization': {
    listFilters: ORGANIZATION_LIST_FILTERS,
    response: { status: 200, description: "The organization's paymethods, newest first.", schema: paymethodList },
    description:
      'With start_au_updated_date and end_au_updated_date this is the Account Updater report: only cards updated in the range, '
      + 'with au_updated_date, au_code and au_description.',
  },
  'onetimetokens-create': {
    request: { kind: 'json', schema: oneTimeTokenSchema },
    response: { status: 201, description: 'The one-time token and the public members of its card or echeck.', schema: oneTimeTokenCreated },
    description:
      'The token lives 60 minutes and is consumed by the first paymethod created from it, under the same organization and location. '
      + 'Location and links.self name the token (GET onetimetokens-get).',
  },
  'onetimetokens-get': {
    response: { status: 200, description: 'The one-time token and the public members of its card or echeck, as minted.', schema: oneTimeTokenFetched },
    description:
      'Answers while a paymethod could still be created from the token: unused, unexpired, under the organization and location it was minted for; '
      + 'otherwise 404 (minted elsewhere, already used or expired).',
  },
  'webhooks-create': {
    request: { kind: 'json', schema: endpointCreateSchema },
    response: { status: 201, description: 'The endpoint, with its signing secret: no later answer repeats it (an Idempotency-Key replay answers without it).', schema: webhookEndpointCreated },
    errors: ['INVALID_WEBHOOK_URL', 'ENDPOINT_LIMIT'],
    description:
      'url: https, at most 2,048 characters, no user or password, a host that is and resolves to public addresses only (checked again at every delivery). '
      + 'event_types: a non-empty array of event types, or ["*"] (the default). At most 16 endpoints per organization.',
  },
  'webhooks-list': {
    response: { status: 200, description: "The organization's endpoints, newest first.", schema: webhookEndpointList },
  },
  'webhooks-get': {
    response: { status: 200, description: 'The endpoint (never its secret).', schema: webhookEndpointFetched },
  },
  'webhooks-update': {
    request: { kind: 'json', schema: endpointUpdateSchema },
    response: { status: 200, description: 'The endpoint as changed.', schema: webhookEndpointUpdated },
    errors: ['INVALID_WEBHOOK_URL', 'CONCURRENT_MODIFICATION'],
    description: 'Disabled: nothing is sent, messages are held (recover sends them). Enabled again: only messages created from then on are sent.',
  },
  'webhooks-delete': {
    response: { status: 200, description: 'The endpoint is gone; nothing more is sent to it.', schema: webhookEndpointDeleted },
  },
  'webhooks-ping': {
    request: { kind: 'json', schema: pingSchema },
    response: { status: 202, description: 'One webhook.ping message is on its way.', schema: webhookAccepted },
  },
  'webhooks-roll-secret': {
    request: { kind: 'json', schema: rollSecretSchema },
    response: { status: 200, description: 'The new secret (in this answer only).', schema: webhookSecretRolled },
    errors: ['CONCURRENT_MODIFICATION'],
  },
  'webhooks-recover': {
    request: { kind: 'json', schema: recoverSchema },
    response: { status: 202, description: 'The held and failed messages created in the range are sent again, each with a new webhook-id, in order per record.', schema: webhookAccepted },
  },
  'webhooks-attempts': {
    response: { status: 200, description: 'Delivery attempts of the last 30 days, newest first.', schema: webhookAttemptList },
  },
  'documents-create': {
    request: { kind: 'multipart', metadata: uploadMetadataSchema, fileContentTypes: UPLOAD_CONTENT_TYPES, maxFileBytes: MAX_FILE_BYTES },
    response: { status: 201, description: 'The stored document.', schema: documentCreated },
    description:
      'Two parts: first the JSON part (Content-Type application/json, any part name), then the file (part name file, with a filename). '
      + 'A file whose leading bytes, extension and Content-Type disagree, a type the resource does not take, or an empty file is 400 naming `file`. '
      + `Files that do not fit one request (over ${MAX_FILE_BYTES} bytes, or the 6 MB single-request cap with base64) go through an upload session (POST .../documents/uploads).`,
  },
  'documents-list': {
    listFilters: DOCUMENT_LIST_FILTERS,
    response: { status: 200, description: 'Available documents, newest first.', schema: documentList },
  },
  'documents-create-upload': {
    request: { kind: 'json', schema: uploadSessionSchema },
    response: { status: 201, description: 'A pending document and the presigned POST for its file.', schema: uploadSessionCreated },
    description:
      `For files up to ${MAX_FILE_BYTES} bytes. After the file is posted, the document turns available (or rejected, with a reason) `
      + 'once the service has checked it; until then GET shows it pending.',
  },
  'documents-get': {
    response: { status: 200, description: 'The document, with its status.', schema: documentFetched },
  },
  'documents-delete': {
    response: { status: 200, description: 'The document record and its stored file are gone.', schema: documentDeleted },
  },
  'documents-download': {
    response: {
      status: 302,
      description: 'Redirect to a presigned URL of the stored file, valid for five minutes.',
      headers: { Location: { description: 'The presigned URL.' }, 'Cache-Control': { description: 'no-store', example: 'no-store' } },
    },
    errors: ['DOCUMENT_NOT_AVAILABLE'],
  },
  'onetimetokens-preflight': {
    response: {
      status: 204,
      description: 'The Origin is allowed by a publishable key of this location: CORS headers for the minting request.',
      headers: {
        'Access-Control-Allow-Origin': { description: 'The request\'s Origin, echoed.', example: 'https://shop.example' },
        'Access-Control-Allow-Methods': { description: 'Methods the browser may use.', example: 'POST' },
        'Access-Control-Allow-Headers': { description: 'Headers the browser may send.', example: 'Authorization, Content-Type, X-Service-Auth-Organization-Id, X-Forte-Auth-Organization-Id, Idempotency-Key' },
        'Access-Control-Max-Age': { description: 'How long the browser may cache this answer, in seconds.', example: '600' },
      },
    },
    errors: ['FORBIDDEN'],
    description:
      'The CORS preflight of browser minting. It carries no credentials: it is answered for an Origin that some publishable key of the location allows, '
      + 'and 403 (without CORS headers) otherwise.',
  },
  'tokenize-js': {
    response: {
      status: 200,
      description: 'The client-side tokenization library, an ES module without dependencies.',
      text: { mediaType: 'text/javascript', description: 'ES module exporting tokenize({ publishableKey, organizationId, locationId, card | echeck }).' },
      headers: {
        'Cache-Control': { description: 'Five minutes; a year, immutable, with ?v=<version>.', example: 'public, max-age=300' },
        ETag: { description: 'The script\'s content hash; If-None-Match answers 304.' },
      },
    },
    notModified: 'If-None-Match named the current ETag: use the cached script.',
  },
  'openapi-get': {
    response: {
      status: 200,
      description: 'This document.',
      schema: openApiDocumentSchema,
      headers: { 'Cache-Control': { description: 'Cacheable for five minutes.', example: 'public, max-age=300' } },
    },
  },
};
