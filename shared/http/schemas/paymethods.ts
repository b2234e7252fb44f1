/** The shapes of the paymethod views (shared/http/paymethods.ts), for the OpenAPI document and the tests. */
import * as z from 'zod/mini';
import { FINGERPRINT_PATTERN } from '#shared/domain/paymethods/fingerprints.ts';
import { ACCOUNT_TYPES, CARD_TYPES, SEC_CODES } from '#shared/domain/paymethods/rules.ts';
import { linkSchema } from './response.ts';

const lastFourSchema = z.string().check(z.regex(/^[0-9]{4}$/));
const maskedSchema = z.string().check(z.regex(/^\*{4}[0-9]{4}$/), z.meta({ description: 'Four asterisks, then the last four digits.' }));
const fingerprintSchema = z.optional(z.string().check(z.regex(FINGERPRINT_PATTERN))).check(
  z.meta({
    description:
      'Keyed hash of the account number (echeck: routing and account number): equal for the same account within this organization, '
      + 'unrelated in any other; at most 64 characters. Computed only for a number the organization stores (never on a one-time token). '
      + 'Absent only on records written before fingerprints and not yet backfilled.',
  }),
);
const fromOneTimeToken = z.optional(z.string()).check(z.meta({ description: 'The one-time token the paymethod was created from.' }));

export const cardViewSchema = z.object({
  card_type: z.enum(CARD_TYPES),
  name_on_card: z.string(),
  last_4_account_number: lastFourSchema,
  masked_account_number: maskedSchema,
  expire_month: z.int().check(z.minimum(1), z.maximum(12)),
  expire_year: z.int().check(z.minimum(2000), z.maximum(9999)),
  procurement_card: z.optional(z.boolean()),
  suppress_account_updater: z.optional(z.boolean()),
  one_time_token: fromOneTimeToken,
  au_code: z.optional(z.string()).check(z.meta({ description: 'Account Updater change: new, exp, cls or con.' })),
  au_description: z.optional(z.string()),
  au_updated_date: z.optional(z.string()).check(z.meta({ format: 'date-time', description: 'Time of the last Account Updater change (ISO 8601, UTC).' })),
  fingerprint: fingerprintSchema,
});

export const echeckViewSchema = z.object({
  account_holder: z.string(),
  last_4_account_number: lastFourSchema,
  masked_account_number: maskedSchema,
  routing_number: z.string(),
  account_type: z.optional(z.enum(ACCOUNT_TYPES)),
  sec_code: z.enum(SEC_CODES),
  item_description: z.optional(z.string()),
  one_time_token: fromOneTimeToken,
  fingerprint: fingerprintSchema,
});

export const vendorViewSchema = z.object({
  vendor_type: z.literal('paypal'),
  vendor_billing_agreement_token: z.string(),
  vendor_billing_agreement_id: z.string().check(z.meta({ description: "PayPal's billing agreement id." })),
});

/** The sub-collections are served by other services of the same API (the spec only references them through links). */
const subCollectionLink = (name: string) =>
  linkSchema.check(z.meta({ description: `The paymethod's ${name} (\`links.self\` + \`/${name}\`), which belong to another service of the same API; this service does not answer this URL.` }));

export const paymethodLinksSchema = z.object({
  self: linkSchema.check(z.meta({ description: "The paymethod's address here (the organization-level path for a locationless paymethod)." })),
  transactions: subCollectionLink('transactions'),
  settlements: subCollectionLink('settlements'),
  schedules: subCollectionLink('schedules'),
});

const paymethodMembers = {
  paymethod_token: z.string().check(z.regex(/^mth_[A-Za-z0-9]+$/)),
  location_id: z.optional(z.string()).check(z.meta({ description: 'Absent for locationless paymethods.' })),
  customer_token: z.optional(z.string()),
  customer_id: z.optional(z.string()),
  billing_address_token: z.optional(z.string()),
  label: z.optional(z.string()),
  notes: z.optional(z.string()),
  card: z.optional(cardViewSchema),
  echeck: z.optional(echeckViewSchema),
  vendor: z.optional(vendorViewSchema),
};

/** paymethodWriteView: create and update answers. */
export const paymethodWriteViewSchema = z.object({
  ...paymethodMembers,
  organization_id: z.optional(z.string()).check(z.meta({ description: 'Present for locationless paymethods only.' })),
});

/** paymethodReadView: get and list answers. */
export const paymethodReadViewSchema = z.object({
  ...paymethodMembers,
  organization_id: z.string(),
  is_default: z.enum(['true', 'false']).check(z.meta({ description: "Whether this is the customer's default paymethod." })),
});

/**
 * No fingerprint: a token stores no paymethod, and a publishable key (public)
 * mints them, so its answer must not compute the organization's keyed hash of
 * any number it is sent (docs/vault.md, "Correlation").
 */
export const oneTimeTokenViewSchema = z.object({
  one_time_token: z.string().check(z.regex(/^ott_[A-Za-z0-9]+$/)),
  expires_at: z.string().check(z.meta({ format: 'date-time', description: 'ISO 8601; the token lives 60 minutes and can be used once.' })),
  card: z.optional(z.omit(cardViewSchema, { one_time_token: true, au_code: true, au_description: true, au_updated_date: true, fingerprint: true })),
  echeck: z.optional(z.omit(echeckViewSchema, { one_time_token: true, fingerprint: true })),
});
