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
import { documentUpdateSchema } from '#shared/domain/documents/update-document.ts';
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
  /**
   * One request and its answer as a client sends and receives them (the JSON
   * body; for a multipart upload its JSON part and the file's text). The
   * document shows them and builds each operation's curl sample from them; a
   * unit test checks each against its schema, and fails for a JSON body or
   * answer without one.
   */
  readonly examples: { readonly request?: unknown; readonly response?: unknown };
}

/** The server the examples name: a deployed stack's ApiUrl. */
const API = 'https://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com/prod';

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
  DocumentUpdate: documentUpdateSchema,
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
const documentUpdated = recordEnvelopeSchema(documentViewSchema, 'Update Successful.', selfLinksSchema);
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
    examples: {
      request: {
        label: 'Main card',
        notes: 'Visa for subscriptions',
        card: {
          card_type: 'visa',
          name_on_card: 'Ann Lee',
          account_number: '4111111111111111',
          expire_month: 12,
          expire_year: 2031,
          card_verification_value: '123',
        },
      },
      response: {
        paymethod_token: 'mth_kVkqVgnKkAujZVipF5fYju',
        location_id: 'loc_1001',
        customer_token: 'cst_1001',
        label: 'Main card',
        notes: 'Visa for subscriptions',
        card: {
          card_type: 'visa',
          name_on_card: 'Ann Lee',
          expire_month: 12,
          expire_year: 2031,
          last_4_account_number: '1111',
          masked_account_number: '****1111',
          fingerprint: 'fp_mJtov_LU6XOQeua1EFVzuQiQiCLImqWaQHG0zJ2_HCE',
        },
        response: {
          environment: 'live',
          response_desc: 'Create Successful.',
        },
        links: {
          self: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju`,
          transactions: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju/transactions`,
          settlements: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju/settlements`,
          schedules: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju/schedules`,
        },
      },
    },
    request: { kind: 'json', schema: createBodySchema },
    response: { status: 201, description: "The paymethod, attached to the path's customer.", schema: paymethodCreated },
    errors: PAYMETHOD_CREATE_ERRORS,
    description: `${CREATE_DESCRIPTION} The first paymethod of a customer becomes its default.`,
  },
  'paymethods-create-location': {
    examples: {
      request: {
        label: 'Operating account',
        echeck: {
          account_holder: 'Lee Bakery LLC',
          account_number: '987654321012',
          routing_number: '021000021',
          account_type: 'checking',
          sec_code: 'CCD',
        },
      },
      response: {
        paymethod_token: 'mth_KR95lbfeOETSyabTK539Ji',
        location_id: 'loc_1001',
        label: 'Operating account',
        echeck: {
          account_holder: 'Lee Bakery LLC',
          routing_number: '021000021',
          account_type: 'checking',
          sec_code: 'CCD',
          last_4_account_number: '1012',
          masked_account_number: '****1012',
          fingerprint: 'fp_RSwkYu3vQzrrs5LbG5GcZ4xxvidw0xmPLx0QPuRROBk',
        },
        response: {
          environment: 'live',
          response_desc: 'Create Successful.',
        },
        links: {
          self: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_KR95lbfeOETSyabTK539Ji`,
          transactions: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_KR95lbfeOETSyabTK539Ji/transactions`,
          settlements: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_KR95lbfeOETSyabTK539Ji/settlements`,
          schedules: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_KR95lbfeOETSyabTK539Ji/schedules`,
        },
      },
    },
    request: { kind: 'json', schema: createBodySchema },
    response: { status: 201, description: 'The paymethod (clientless, or attached to the body customer_token).', schema: paymethodCreated },
    errors: PAYMETHOD_CREATE_ERRORS,
    description: CREATE_DESCRIPTION,
  },
  'paymethods-create-locationless': {
    examples: {
      request: {
        organization_id: 'org_demo',
        vendor: {
          vendor_type: 'paypal',
          vendor_billing_agreement_token: 'BA-8A802366G0648845U',
        },
      },
      response: {
        paymethod_token: 'mth_M3UEZgstj2TOzyT1dHp24N',
        organization_id: 'org_demo',
        customer_token: 'cst_2001',
        vendor: {
          vendor_type: 'paypal',
          vendor_billing_agreement_token: 'BA-8A802366G0648845U',
          vendor_billing_agreement_id: 'B-YSVBLA8747ZMAHKR6',
        },
        response: {
          environment: 'live',
          response_desc: 'Create Successful.',
        },
        links: {
          self: `${API}/v3/organizations/org_demo/paymethods/mth_M3UEZgstj2TOzyT1dHp24N`,
          transactions: `${API}/v3/organizations/org_demo/paymethods/mth_M3UEZgstj2TOzyT1dHp24N/transactions`,
          settlements: `${API}/v3/organizations/org_demo/paymethods/mth_M3UEZgstj2TOzyT1dHp24N/settlements`,
          schedules: `${API}/v3/organizations/org_demo/paymethods/mth_M3UEZgstj2TOzyT1dHp24N/schedules`,
        },
      },
    },
    request: { kind: 'json', schema: locationlessCreateBodySchema },
    response: { status: 201, description: 'The locationless paymethod.', schema: paymethodCreated },
    errors: ['DUPLICATE_PAYMETHOD', 'VENDOR_REFUSED', 'CONCURRENT_MODIFICATION'],
    description:
      "The body names the organization (organization_id): one the caller may act on, or 403. One-time tokens are not accepted here (400).",
  },
  'paymethods-get': {
    examples: {
      response: {
        paymethod_token: 'mth_kVkqVgnKkAujZVipF5fYju',
        organization_id: 'org_demo',
        location_id: 'loc_1001',
        customer_token: 'cst_1001',
        label: 'Main card',
        notes: 'Visa for subscriptions',
        card: {
          last_4_account_number: '1111',
          masked_account_number: '****1111',
          expire_month: 12,
          fingerprint: 'fp_mJtov_LU6XOQeua1EFVzuQiQiCLImqWaQHG0zJ2_HCE',
          expire_year: 2031,
          card_type: 'visa',
          name_on_card: 'Ann Lee',
        },
        is_default: 'true',
        response: {
          environment: 'live',
          response_desc: 'Get Successful.',
        },
        links: {
          self: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju`,
          transactions: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju/transactions`,
          settlements: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju/settlements`,
          schedules: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju/schedules`,
        },
      },
    },
    response: { status: 200, description: 'The paymethod.', schema: paymethodFetched },
  },
  'paymethods-update': {
    description: 'Partial update: only the members sent change (a customer move, an echeck, the billing address, a card\'s expiry).',
    examples: {
      request: {
        label: 'Backup card',
        card: {
          expire_month: 6,
          expire_year: 2032,
        },
      },
      response: {
        paymethod_token: 'mth_kVkqVgnKkAujZVipF5fYju',
        location_id: 'loc_1001',
        customer_token: 'cst_1001',
        label: 'Backup card',
        notes: 'Visa for subscriptions',
        card: {
          last_4_account_number: '1111',
          masked_account_number: '****1111',
          expire_month: 6,
          fingerprint: 'fp_mJtov_LU6XOQeua1EFVzuQiQiCLImqWaQHG0zJ2_HCE',
          expire_year: 2032,
          card_type: 'visa',
          name_on_card: 'Ann Lee',
        },
        response: {
          environment: 'live',
          response_desc: 'Update Successful.',
        },
        links: {
          self: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju`,
          transactions: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju/transactions`,
          settlements: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju/settlements`,
          schedules: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju/schedules`,
        },
      },
    },
    request: { kind: 'json', schema: updateBodySchema },
    response: { status: 200, description: 'The updated paymethod.', schema: paymethodUpdated },
    errors: ['CONCURRENT_MODIFICATION'],
  },
  'paymethods-delete': {
    examples: {
      response: {
        paymethod_token: 'mth_KR95lbfeOETSyabTK539Ji',
        response: {
          environment: 'live',
          response_desc: 'Delete Successful.',
        },
      },
    },
    response: { status: 200, description: 'The paymethod and its ciphertext are gone.', schema: paymethodDeleted },
    errors: ['CONCURRENT_MODIFICATION'],
  },
  'paymethods-update-organization': {
    examples: {
      request: {
        notes: 'PayPal for renewals',
      },
      response: {
        paymethod_token: 'mth_M3UEZgstj2TOzyT1dHp24N',
        organization_id: 'org_demo',
        customer_token: 'cst_2001',
        notes: 'PayPal for renewals',
        vendor: {
          vendor_billing_agreement_token: 'BA-8A802366G0648845U',
          vendor_billing_agreement_id: 'B-YSVBLA8747ZMAHKR6',
          vendor_type: 'paypal',
        },
        response: {
          environment: 'live',
          response_desc: 'Update Successful.',
        },
        links: {
          self: `${API}/v3/organizations/org_demo/paymethods/mth_M3UEZgstj2TOzyT1dHp24N`,
          transactions: `${API}/v3/organizations/org_demo/paymethods/mth_M3UEZgstj2TOzyT1dHp24N/transactions`,
          settlements: `${API}/v3/organizations/org_demo/paymethods/mth_M3UEZgstj2TOzyT1dHp24N/settlements`,
          schedules: `${API}/v3/organizations/org_demo/paymethods/mth_M3UEZgstj2TOzyT1dHp24N/schedules`,
        },
      },
    },
    request: { kind: 'json', schema: updateBodySchema },
    response: { status: 200, description: 'The updated paymethod.', schema: paymethodUpdated },
    errors: ['CONCURRENT_MODIFICATION'],
    description: 'As the update at the location path, for a paymethod of any location of the organization, or of none: the one path a locationless paymethod has.',
  },
  'paymethods-delete-organization': {
    examples: {
      response: {
        paymethod_token: 'mth_M3UEZgstj2TOzyT1dHp24N',
        response: {
          environment: 'live',
          response_desc: 'Delete Successful.',
        },
      },
    },
    response: { status: 200, description: 'The paymethod and its ciphertext are gone.', schema: paymethodDeleted },
    errors: ['CONCURRENT_MODIFICATION'],
    description: 'As the delete at the location path, for a paymethod of any location of the organization, or of none: the one path a locationless paymethod has.',
  },
  'paymethods-get-organization': {
    description: 'The paymethod, at any location of the organization or at none (a locationless one).',
    examples: {
      response: {
        paymethod_token: 'mth_kVkqVgnKkAujZVipF5fYju',
        organization_id: 'org_demo',
        location_id: 'loc_1001',
        customer_token: 'cst_1001',
        label: 'Backup card',
        notes: 'Visa for subscriptions',
        card: {
          last_4_account_number: '1111',
          masked_account_number: '****1111',
          expire_month: 6,
          fingerprint: 'fp_mJtov_LU6XOQeua1EFVzuQiQiCLImqWaQHG0zJ2_HCE',
          expire_year: 2032,
          card_type: 'visa',
          name_on_card: 'Ann Lee',
        },
        is_default: 'true',
        response: {
          environment: 'live',
          response_desc: 'Get Successful.',
        },
        links: {
          self: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju`,
          transactions: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju/transactions`,
          settlements: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju/settlements`,
          schedules: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju/schedules`,
        },
      },
    },
    response: { status: 200, description: 'The paymethod, whichever location it belongs to (or none).', schema: paymethodFetched },
  },
  'paymethods-list-customer': {
    examples: {
      response: {
        number_results: 1,
        search_criteria: {
          page_size: 1,
          page_index: 0,
          home_organization_id: 'org_demo',
          resource_specific: {
            location_id: 'loc_1001',
            customer_token: 'cst_1001',
          },
        },
        results: [
          {
            paymethod_token: 'mth_kVkqVgnKkAujZVipF5fYju',
            organization_id: 'org_demo',
            location_id: 'loc_1001',
            customer_token: 'cst_1001',
            label: 'Backup card',
            notes: 'Visa for subscriptions',
            card: {
              last_4_account_number: '1111',
              masked_account_number: '****1111',
              expire_month: 6,
              fingerprint: 'fp_mJtov_LU6XOQeua1EFVzuQiQiCLImqWaQHG0zJ2_HCE',
              expire_year: 2032,
              card_type: 'visa',
              name_on_card: 'Ann Lee',
            },
            is_default: 'true',
            links: {
              self: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju`,
              transactions: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju/transactions`,
              settlements: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju/settlements`,
              schedules: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju/schedules`,
            },
          },
        ],
        response: {
          environment: 'live',
          response_desc: 'Get Successful.',
        },
        links: {
          self: `${API}/v3/organizations/org_demo/locations/loc_1001/customers/cst_1001/paymethods?page_size=1`,
        },
      },
    },
    listFilters: CUSTOMER_LIST_FILTERS,
    response: { status: 200, description: "The customer's paymethods at the location, newest first.", schema: paymethodList },
  },
  'paymethods-list-location': {
    examples: {
      response: {
        number_results: 1,
        search_criteria: {
          page_size: 1,
          page_index: 0,
          home_organization_id: 'org_demo',
          resource_specific: {
            paymethod_type: 'echeck',
          },
        },
        results: [
          {
            paymethod_token: 'mth_KR95lbfeOETSyabTK539Ji',
            organization_id: 'org_demo',
            location_id: 'loc_1001',
            label: 'Operating account',
            echeck: {
              last_4_account_number: '1012',
              account_type: 'checking',
              masked_account_number: '****1012',
              account_holder: 'Lee Bakery LLC',
              fingerprint: 'fp_RSwkYu3vQzrrs5LbG5GcZ4xxvidw0xmPLx0QPuRROBk',
              routing_number: '021000021',
              sec_code: 'CCD',
            },
            is_default: 'false',
            links: {
              self: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_KR95lbfeOETSyabTK539Ji`,
              transactions: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_KR95lbfeOETSyabTK539Ji/transactions`,
              settlements: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_KR95lbfeOETSyabTK539Ji/settlements`,
              schedules: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_KR95lbfeOETSyabTK539Ji/schedules`,
            },
          },
        ],
        response: {
          environment: 'live',
          response_desc: 'Get Successful.',
        },
        links: {
          self: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods?filter=paymethod_type+eq+%27echeck%27&page_size=1`,
        },
      },
    },
    listFilters: LOCATION_LIST_FILTERS,
    response: { status: 200, description: "The location's paymethods, newest first.", schema: paymethodList },
  },
  'paymethods-list-organization': {
    examples: {
      response: {
        number_results: 1,
        search_criteria: {
          page_size: 1,
          page_index: 0,
          home_organization_id: 'org_demo',
          resource_specific: {
            customer_token: 'cst_1001',
          },
        },
        results: [
          {
            paymethod_token: 'mth_kVkqVgnKkAujZVipF5fYju',
            organization_id: 'org_demo',
            location_id: 'loc_1001',
            customer_token: 'cst_1001',
            label: 'Backup card',
            notes: 'Visa for subscriptions',
            card: {
              last_4_account_number: '1111',
              masked_account_number: '****1111',
              expire_month: 6,
              fingerprint: 'fp_mJtov_LU6XOQeua1EFVzuQiQiCLImqWaQHG0zJ2_HCE',
              expire_year: 2032,
              card_type: 'visa',
              name_on_card: 'Ann Lee',
            },
            is_default: 'true',
            links: {
              self: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju`,
              transactions: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju/transactions`,
              settlements: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju/settlements`,
              schedules: `${API}/v3/organizations/org_demo/locations/loc_1001/paymethods/mth_kVkqVgnKkAujZVipF5fYju/schedules`,
            },
          },
        ],
        response: {
          environment: 'live',
          response_desc: 'Get Successful.',
        },
        links: {
          self: `${API}/v3/organizations/org_demo/paymethods?filter=customer_token+eq+%27cst_1001%27&page_size=1`,
        },
      },
    },
    listFilters: ORGANIZATION_LIST_FILTERS,
    response: { status: 200, description: "The organization's paymethods, newest first.", schema: paymethodList },
    description:
      'With start_au_updated_date and end_au_updated_date this is the Account Updater report: only cards updated in the range, '
      + 'with au_updated_date, au_code and au_description.',
  },
  'onetimetokens-create': {
    examples: {
      request: {
        card: {
          card_type: 'visa',
          name_on_card: 'Ann Lee',
          account_number: '4111111111111111',
          expire_month: 12,
          expire_year: 2031,
          card_verification_value: '123',
        },
      },
      response: {
        one_time_token: 'ott_5E07tg5NBtqf90McJqQ8lA',
        expires_at: '2026-11-28T03:29:15.865Z',
        card: {
          card_type: 'visa',
          name_on_card: 'Ann Lee',
          expire_month: 12,
          expire_year: 2031,
          last_4_account_number: '1111',
          masked_account_number: '****1111',
        },
        response: {
          environment: 'live',
          response_desc: 'Create Successful.',
        },
        links: {
          self: `${API}/v3/organizations/org_demo/locations/loc_1001/onetimetokens/ott_5E07tg5NBtqf90McJqQ8lA`,
        },
      },
    },
    request: { kind: 'json', schema: oneTimeTokenSchema },
    response: { status: 201, description: 'The one-time token and the public members of its card or echeck.', schema: oneTimeTokenCreated },
    description:
      'The token lives 60 minutes and is consumed by the first paymethod created from it, under the same organization and location. '
      + 'Location and links.self name the token (GET onetimetokens-get).',
  },
  'onetimetokens-get': {
    examples: {
      response: {
        one_time_token: 'ott_5E07tg5NBtqf90McJqQ8lA',
        expires_at: '2026-11-28T03:29:15.865Z',
        card: {
          expire_month: 12,
          last_4_account_number: '1111',
          expire_year: 2031,
          masked_account_number: '****1111',
          card_type: 'visa',
          name_on_card: 'Ann Lee',
        },
        response: {
          environment: 'live',
          response_desc: 'Get Successful.',
        },
        links: {
          self: `${API}/v3/organizations/org_demo/locations/loc_1001/onetimetokens/ott_5E07tg5NBtqf90McJqQ8lA`,
        },
      },
    },
    response: { status: 200, description: 'The one-time token and the public members of its card or echeck, as minted.', schema: oneTimeTokenFetched },
    description:
      'Answers while a paymethod could still be created from the token: unused, unexpired, under the organization and location it was minted for; '
      + 'otherwise 404 (minted elsewhere, already used or expired).',
  },
  'webhooks-create': {
    examples: {
      request: { url: 'https://merchant.example.com/hooks/payments', event_types: ['paymethod.account_updated', 'document.scanned'], description: 'Card updates and scan results' },
      response: {
        webhook_endpoint_id: 'whe_4Jq8ZrT2mVb6NcX1pLs0Ye',
        organization_id: 'org_demo',
        url: 'https://merchant.example.com/hooks/payments',
        event_types: ['paymethod.account_updated', 'document.scanned'],
        description: 'Card updates and scan results',
        status: 'enabled',
        created_at: '2026-11-28T09:15:02.118Z',
        updated_at: '2026-11-28T09:15:02.118Z',
        secret: 'whsec_MfKQ9r8GKYqXt5VqYz3kD0bH1n2w4e6R8t0yU2i4o6A=',
        response: { environment: 'live', response_desc: 'Create Successful.' },
        links: { self: `${API}/v3/organizations/org_demo/webhook_endpoints/whe_4Jq8ZrT2mVb6NcX1pLs0Ye` },
      },
    },
    request: { kind: 'json', schema: endpointCreateSchema },
    response: { status: 201, description: 'The endpoint, with its signing secret: no later answer repeats it (an Idempotency-Key replay answers without it).', schema: webhookEndpointCreated },
    errors: ['INVALID_WEBHOOK_URL', 'ENDPOINT_LIMIT'],
    description:
      'url: https, at most 2,048 characters, no user or password, a host that is and resolves to public addresses only (checked again at every delivery). '
      + 'event_types: a non-empty array of event types, or ["*"] (the default). At most 16 endpoints per organization.',
  },
  'webhooks-list': {
    // Paged like the other lists; no filter members.
    listFilters: {},
    examples: {
      response: {
        number_results: 1,
        search_criteria: { page_size: 20, page_index: 0, home_organization_id: 'org_demo', resource_specific: {} },
        results: [{
          webhook_endpoint_id: 'whe_4Jq8ZrT2mVb6NcX1pLs0Ye',
          organization_id: 'org_demo',
          url: 'https://merchant.example.com/hooks/payments',
          event_types: ['paymethod.account_updated', 'document.scanned'],
          description: 'Card updates and scan results',
          status: 'enabled',
          created_at: '2026-11-28T09:15:02.118Z',
          updated_at: '2026-11-28T09:15:02.118Z',
          links: { self: `${API}/v3/organizations/org_demo/webhook_endpoints/whe_4Jq8ZrT2mVb6NcX1pLs0Ye` },
        }],
        response: { environment: 'live', response_desc: 'Get Successful.' },
        links: { self: `${API}/v3/organizations/org_demo/webhook_endpoints` },
      },
    },
    response: { status: 200, description: "The organization's endpoints, newest first.", schema: webhookEndpointList },
  },
  'webhooks-get': {
    examples: {
      response: {
        webhook_endpoint_id: 'whe_4Jq8ZrT2mVb6NcX1pLs0Ye',
        organization_id: 'org_demo',
        url: 'https://merchant.example.com/hooks/payments',
        event_types: ['paymethod.account_updated', 'document.scanned'],
        description: 'Card updates and scan results',
        status: 'enabled',
        created_at: '2026-11-28T09:15:02.118Z',
        updated_at: '2026-11-28T09:15:02.118Z',
        response: { environment: 'live', response_desc: 'Get Successful.' },
        links: { self: `${API}/v3/organizations/org_demo/webhook_endpoints/whe_4Jq8ZrT2mVb6NcX1pLs0Ye` },
      },
    },
    response: { status: 200, description: 'The endpoint (never its secret).', schema: webhookEndpointFetched },
  },
  'webhooks-update': {
    examples: {
      request: { status: 'disabled' },
      response: {
        webhook_endpoint_id: 'whe_4Jq8ZrT2mVb6NcX1pLs0Ye',
        organization_id: 'org_demo',
        url: 'https://merchant.example.com/hooks/payments',
        event_types: ['paymethod.account_updated', 'document.scanned'],
        description: 'Card updates and scan results',
        status: 'disabled',
        disabled_reason: 'disabled_by_merchant',
        created_at: '2026-11-28T09:15:02.118Z',
        updated_at: '2026-11-28T10:02:40.551Z',
        response: { environment: 'live', response_desc: 'Update Successful.' },
        links: { self: `${API}/v3/organizations/org_demo/webhook_endpoints/whe_4Jq8ZrT2mVb6NcX1pLs0Ye` },
      },
    },
    request: { kind: 'json', schema: endpointUpdateSchema },
    response: { status: 200, description: 'The endpoint as changed.', schema: webhookEndpointUpdated },
    errors: ['INVALID_WEBHOOK_URL', 'CONCURRENT_MODIFICATION'],
    description: 'Disabled: nothing is sent, messages are held (recover sends them). Enabled again: only messages created from then on are sent.',
  },
  'webhooks-delete': {
    examples: {
      response: { webhook_endpoint_id: 'whe_4Jq8ZrT2mVb6NcX1pLs0Ye', response: { environment: 'live', response_desc: 'Delete Successful.' } },
    },
    response: { status: 200, description: 'The endpoint is gone; nothing more is sent to it.', schema: webhookEndpointDeleted },
  },
  'webhooks-ping': {
    examples: {
      request: {},
      response: { webhook_endpoint_id: 'whe_4Jq8ZrT2mVb6NcX1pLs0Ye', response: { environment: 'live', response_desc: 'Request Accepted.' }, links: { self: `${API}/v3/organizations/org_demo/webhook_endpoints/whe_4Jq8ZrT2mVb6NcX1pLs0Ye` } },
    },
    request: { kind: 'json', schema: pingSchema },
    response: { status: 202, description: 'One webhook.ping message is on its way.', schema: webhookAccepted },
  },
  'webhooks-roll-secret': {
    examples: {
      request: { expire_previous_after_seconds: 86400 },
      response: {
        webhook_endpoint_id: 'whe_4Jq8ZrT2mVb6NcX1pLs0Ye',
        organization_id: 'org_demo',
        url: 'https://merchant.example.com/hooks/payments',
        event_types: ['paymethod.account_updated', 'document.scanned'],
        description: 'Card updates and scan results',
        status: 'enabled',
        created_at: '2026-11-28T09:15:02.118Z',
        updated_at: '2026-11-28T09:15:02.118Z',
        secret: 'whsec_p3Vt8Jm1Qa6Rz0Lw2Kd5Nc7Hy9Bx4Fs1Ge3Ui5Oj7Ak=',
        previous_secret_expires_at: '2026-11-29T10:05:00.000Z',
        response: { environment: 'live', response_desc: 'Update Successful.' },
        links: { self: `${API}/v3/organizations/org_demo/webhook_endpoints/whe_4Jq8ZrT2mVb6NcX1pLs0Ye` },
      },
    },
    request: { kind: 'json', schema: rollSecretSchema },
    response: { status: 200, description: 'The new secret (in this answer only).', schema: webhookSecretRolled },
    errors: ['CONCURRENT_MODIFICATION'],
  },
  'webhooks-recover': {
    examples: {
      request: { since: '2026-11-27T00:00:00Z', until: '2026-11-28T00:00:00Z' },
      response: { webhook_endpoint_id: 'whe_4Jq8ZrT2mVb6NcX1pLs0Ye', messages: 42, response: { environment: 'live', response_desc: 'Request Accepted.' }, links: { self: `${API}/v3/organizations/org_demo/webhook_endpoints/whe_4Jq8ZrT2mVb6NcX1pLs0Ye` } },
    },
    request: { kind: 'json', schema: recoverSchema },
    response: { status: 202, description: 'The held and failed messages created in the range are sent again, each with a new webhook-id, in order per record.', schema: webhookAccepted },
  },
  'webhooks-attempts': {
    // Paged like the other lists; no filter members.
    listFilters: {},
    examples: {
      response: {
        number_results: 1,
        search_criteria: { page_size: 20, page_index: 0, home_organization_id: 'org_demo', resource_specific: {} },
        results: [{
          attempt_id: 'wha_7Tg2Lm9Qx4Vb1Nc6Rz8Kp0',
          message_id: 'msg_2Yh5Jk8Lm1Nq4Rt7Vw0Xz3Ab',
          event_type: 'paymethod.account_updated',
          event_id: 'evt_4e524eb5420371c4585f592408d59b1d',
          attempted_at: '2026-11-28T09:20:11.402Z',
          status_code: 200,
          outcome: 'delivered',
          duration_ms: 143,
          response_excerpt: '{"received":true}',
        }],
        response: { environment: 'live', response_desc: 'Get Successful.' },
        links: { self: `${API}/v3/organizations/org_demo/webhook_endpoints/whe_4Jq8ZrT2mVb6NcX1pLs0Ye/attempts` },
      },
    },
    response: { status: 200, description: 'Delivery attempts of the last 30 days, newest first.', schema: webhookAttemptList },
  },
  'documents-create': {
    examples: {
      request: {
        metadata: {
          resource: 'application',
          resource_id: 'app_1001',
          description: 'Signed receipt',
        },
        file: 'Receipt 1001: 12.50 USD\n',
      },
      response: {
        document_id: 'doc_jURx9tzO5BZhrFWUr1F0Tc',
        resource: 'application',
        resource_id: 'app_1001',
        type: 'txt',
        file: 'receipt.txt',
        description: 'Signed receipt',
        size: 24,
        received_date: '2026-11-28',
        status: 'available',
        response: {
          environment: 'live',
          response_desc: 'Create Successful.',
        },
        links: {
          self: `${API}/v3/organizations/org_demo/documents/doc_jURx9tzO5BZhrFWUr1F0Tc`,
        },
      },
    },
    request: { kind: 'multipart', metadata: uploadMetadataSchema, fileContentTypes: UPLOAD_CONTENT_TYPES, maxFileBytes: MAX_FILE_BYTES },
    response: { status: 201, description: 'The stored document.', schema: documentCreated },
    errors: ['DUPLICATE_DOCUMENT'],
    description:
      'Two parts: first the JSON part (Content-Type application/json, any part name), then the file (part name file, with a filename). '
      + 'A file whose leading bytes, extension and Content-Type disagree, a type the resource does not take, or an empty file is 400 naming `file`. '
      + `Files that do not fit one request (over ${MAX_FILE_BYTES} bytes, or the 6 MB single-request cap with base64) go through an upload session (POST .../documents/uploads).`,
  },
  'documents-list': {
    examples: {
      response: {
        number_results: 1,
        search_criteria: {
          page_size: 1,
          page_index: 0,
          home_organization_id: 'org_demo',
          resource_specific: {
            resource: 'application',
          },
        },
        results: [
          {
            document_id: 'doc_jURx9tzO5BZhrFWUr1F0Tc',
            resource: 'application',
            resource_id: 'app_1001',
            type: 'txt',
            description: 'Signed receipt',
            size: 24,
            received_date: '2026-11-28',
          },
        ],
        response: {
          environment: 'live',
          response_desc: 'Get Successful.',
        },
        links: {
          self: `${API}/v3/organizations/org_demo/documents?filter=resource+eq+%27application%27&page_size=1`,
        },
      },
    },
    listFilters: DOCUMENT_LIST_FILTERS,
    response: { status: 200, description: 'Available documents, newest first.', schema: documentList },
  },
  'documents-create-upload': {
    examples: {
      request: {
        resource: 'dispute',
        resource_id: 'dsp_2002',
        description: 'Delivery photo',
        file_name: 'delivery.jpg',
      },
      response: {
        document_id: 'doc_RXqSv1WOljnxuZSYfyN7Va',
        resource: 'dispute',
        resource_id: 'dsp_2002',
        file: 'delivery.jpg',
        description: 'Delivery photo',
        status: 'pending',
        upload: {
          url: 'https://payments-documents-prod.s3.us-east-1.amazonaws.com',
          fields: {
            'x-amz-server-side-encryption': 'aws:kms',
            'x-amz-server-side-encryption-aws-kms-key-id': 'arn:aws:kms:us-east-1:123456789012:key/f0f16a4e-0679-4ac6-90a9-f4450ea5dbe6',
            bucket: 'payments-documents-prod',
            'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
            'X-Amz-Credential': 'AKIAFNS23CCBPKJ2K2OS/20261128/us-east-1/s3/aws4_request',
            'X-Amz-Date': '20261128T022952Z',
            key: 'uploads/org_demo/doc_RXqSv1WOljnxuZSYfyN7Va',
            Policy: 'eyJleHBpcmF0aW9uIjoiMjAyNi0xMS0yOFQwMjo0NDo1MloiLCJjb25kaXRpb25zIjpbXX0=',
            'X-Amz-Signature': '3fe27f35be7ff59a54e06527e1c6753b65df989c88d29b4d70a2918dd198d49c',
          },
          expires_at: '2026-11-28T02:44:52.442Z',
        },
        response: {
          environment: 'live',
          response_desc: 'Create Successful.',
        },
        links: {
          self: `${API}/v3/organizations/org_demo/documents/doc_RXqSv1WOljnxuZSYfyN7Va`,
        },
      },
    },
    request: { kind: 'json', schema: uploadSessionSchema },
    response: { status: 201, description: 'A pending document and the presigned POST for its file.', schema: uploadSessionCreated },
    description:
      `For files up to ${MAX_FILE_BYTES} bytes. After the file is posted, the document turns available (or rejected, with a reason) `
      + 'once the service has checked it; until then GET shows it pending.',
  },
  'documents-get': {
    examples: {
      response: {
        document_id: 'doc_jURx9tzO5BZhrFWUr1F0Tc',
        resource: 'application',
        resource_id: 'app_1001',
        type: 'txt',
        file: 'receipt.txt',
        description: 'Signed receipt',
        size: 24,
        received_date: '2026-11-28',
        status: 'available',
        sha256: '5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8',
        scan_status: 'clean',
        legal_hold: false,
        response: {
          environment: 'live',
          response_desc: 'Get Successful.',
        },
        links: {
          self: `${API}/v3/organizations/org_demo/documents/doc_jURx9tzO5BZhrFWUr1F0Tc`,
        },
      },
    },
    response: { status: 200, description: 'The document, with its status.', schema: documentFetched },
  },
  'documents-update': {
    examples: {
      request: { legal_hold: true, retain_until: '2028-11-28' },
      response: {
        document_id: 'doc_jURx9tzO5BZhrFWUr1F0Tc',
        resource: 'dispute',
        resource_id: 'dsp_1001',
        type: 'mp3',
        file: 'authorization-call.mp3',
        description: 'Recorded telephone authorization',
        size: 48213,
        received_date: '2026-11-28',
        status: 'available',
        sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
        scan_status: 'clean',
        retain_until: '2028-11-28',
        legal_hold: true,
        response: {
          environment: 'live',
          response_desc: 'Update Successful.',
        },
        links: {
          self: `${API}/v3/organizations/org_demo/documents/doc_jURx9tzO5BZhrFWUr1F0Tc`,
        },
      },
    },
    request: { kind: 'json', schema: documentUpdateSchema },
    response: { status: 200, description: 'The document, with its retention and legal hold.', schema: documentUpdated },
    errors: ['DOCUMENT_NOT_AVAILABLE', 'CONCURRENT_MODIFICATION'],
    description:
      'Takes only `legal_hold` and `retain_until` (at least one). `retain_until` can be extended, never shortened: an earlier date than the one kept, '
      + 'or a date in the past, is 400. The stored file\'s S3 Object Lock (governance mode) follows.',
  },
  'documents-delete': {
    examples: {
      response: {
        document_id: 'doc_jURx9tzO5BZhrFWUr1F0Tc',
        response: {
          environment: 'live',
          response_desc: 'Delete Successful.',
        },
      },
    },
    response: { status: 200, description: 'The document record and its stored file are gone.', schema: documentDeleted },
    errors: ['RETENTION_ACTIVE'],
    description: 'A document on legal hold, or whose `retain_until` has not passed, is 409 RETENTION_ACTIVE and nothing is removed. Deleting a document frees its SHA-256 for its resource_id.',
  },
  'documents-download': {
    examples: {},
    response: {
      status: 302,
      description: 'Redirect to a presigned URL of the stored file, valid for five minutes.',
      headers: { Location: { description: 'The presigned URL.' }, 'Cache-Control': { description: 'no-store', example: 'no-store' } },
    },
    errors: ['DOCUMENT_NOT_AVAILABLE', 'SCAN_PENDING', 'DOCUMENT_INFECTED', 'SCAN_FAILED'],
    description:
      'Only a file the malware scan found clean is served: while the scan runs the answer is 409 SCAN_PENDING with Retry-After; '
      + 'an infected file is 409 DOCUMENT_INFECTED (its bytes were removed); a failed scan is 409 SCAN_FAILED.',
  },
  'onetimetokens-preflight': {
    examples: {},
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
    description: 'The client-side tokenization library, an ES module without dependencies, cacheable, with an ETag.',
    examples: {},
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
    examples: {
      response: { openapi: '3.1.0', info: { title: 'Payments API: documents and paymethods', version: '3' }, paths: {} },
    },
    response: {
      status: 200,
      description: 'This document.',
      schema: openApiDocumentSchema,
      headers: { 'Cache-Control': { description: 'Cacheable for five minutes.', example: 'public, max-age=300' } },
    },
  },
};
