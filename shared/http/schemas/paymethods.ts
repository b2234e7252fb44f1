/** The shapes of the paymethod views (shared/http/paymethods.ts), for the OpenAPI document and the tests. */
import { z } from 'zod';
import { FINGERPRINT_PATTERN } from '#shared/domain/paymethods/fingerprints.ts';
import { ACCOUNT_TYPES, CARD_TYPES, SEC_CODES } from '#shared/domain/paymethods/rules.ts';
import { linkSchema } from './response.ts';

const lastFourSchema = z.string().regex(/^[0-9]{4}$/);
const fingerprintSchema = z.string().regex(FINGERPRINT_PATTERN).optional().meta({
  description:
    'Keyed hash of the account number (echeck: routing and account number): equal for the same account within this organization, '
    + 'unrelated in any other; at most 64 characters. Absent only on records written before fingerprints and not yet backfilled.',
});
const maskedSchema = z.string().regex(/^\*{4}[0-9]{4}$/).meta({ description: 'Four asterisks, then the last four digits.' });

export const cardViewSchema = z.object({
  card_type: z.enum(CARD_TYPES),
  name_on_card: z.string(),
  last_4_account_number: lastFourSchema,
  masked_account_number: maskedSchema,
  expire_month: z.number().int().min(1).max(12),
  expire_year: z.number().int().min(2000).max(9999),
  procurement_card: z.boolean().optional(),
  suppress_account_updater: z.boolean().optional(),
  one_time_token: z.string().optional().meta({ description: 'The one-time token the paymethod was created from.' }),
  au_code: z.string().optional().meta({ description: 'Account Updater change: new, exp, cls or con.' }),
  au_description: z.string().optional(),
  au_updated_date: z.string().optional().meta({ format: 'date-time', description: 'Time of the last Account Updater change (ISO 8601, UTC).' }),
  fingerprint: fingerprintSchema,
});

export const echeckViewSchema = z.object({
  account_holder: z.string(),
  last_4_account_number: lastFourSchema,
  masked_account_number: maskedSchema,
  routing_number: z.string(),
  account_type: z.enum(ACCOUNT_TYPES).optional(),
  sec_code: z.enum(SEC_CODES),
  item_description: z.string().optional(),
  one_time_token: z.string().optional().meta({ description: 'The one-time token the paymethod was created from.' }),
  fingerprint: fingerprintSchema,
});

export const vendorViewSchema = z.object({
  vendor_type: z.literal('paypal'),
  vendor_billing_agreement_token: z.string(),
  vendor_billing_agreement_id: z.string().meta({ description: "PayPal's billing agreement id." }),
});

export const paymethodLinksSchema = z.object({ self: linkSchema, transactions: linkSchema, settlements: linkSchema, schedules: linkSchema });

const paymethodMembers = {
  paymethod_token: z.string().regex(/^mth_[A-Za-z0-9]+$/),
  location_id: z.string().optional().meta({ description: 'Absent for locationless paymethods.' }),
  customer_token: z.string().optional(),
  customer_id: z.string().optional(),
  billing_address_token: z.string().optional(),
  label: z.string().optional(),
  notes: z.string().optional(),
  card: cardViewSchema.optional(),
  echeck: echeckViewSchema.optional(),
  vendor: vendorViewSchema.optional(),
};

/** paymethodWriteView: create and update answers. */
export const paymethodWriteViewSchema = z.object({
  ...paymethodMembers,
  organization_id: z.string().optional().meta({ description: 'Present for locationless paymethods only.' }),
});

/** paymethodReadView: get and list answers. */
export const paymethodReadViewSchema = z.object({
  ...paymethodMembers,
  organization_id: z.string(),
  is_default: z.enum(['true', 'false']).meta({ description: "Whether this is the customer's default paymethod." }),
});

export const oneTimeTokenViewSchema = z.object({
  one_time_token: z.string().regex(/^ott_[A-Za-z0-9]+$/),
  expires_at: z.string().meta({ format: 'date-time', description: 'ISO 8601; the token lives 60 minutes and can be used once.' }),
  card: cardViewSchema.omit({ one_time_token: true, au_code: true, au_description: true, au_updated_date: true }).optional(),
  echeck: echeckViewSchema.omit({ one_time_token: true }).optional(),
});
