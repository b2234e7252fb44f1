import type { ACCOUNT_TYPES, CARD_TYPES, PAYMETHOD_TYPES, SEC_CODES } from './rules.ts';

export type PaymethodType = (typeof PAYMETHOD_TYPES)[number];
export type CardType = (typeof CARD_TYPES)[number];
export type SecCode = (typeof SEC_CODES)[number];
export type AccountType = (typeof ACCOUNT_TYPES)[number];

/** What the service keeps of a card: never the number, never the CVV or accounting code. */
export interface CardDetails {
  card_type: CardType;
  name_on_card: string;
  last_4_account_number: string;
  masked_account_number: string;
  expire_month: number;
  expire_year: number;
  procurement_card?: boolean;
  suppress_account_updater?: boolean;
  /** Echo of the one-time token the paymethod was made from. */
  one_time_token?: string;
  au_code?: string;
  au_description?: string;
  au_updated_date?: string;
  /** Keyed hash of the number (fingerprints.ts): equal for equal numbers within the organization only. */
  fingerprint?: string;
}

export interface EcheckDetails {
  account_holder: string;
  last_4_account_number: string;
  masked_account_number: string;
  routing_number: string;
  account_type?: AccountType;
  sec_code: SecCode;
  item_description?: string;
  one_time_token?: string;
  /** Keyed hash of routing and account number: equal for the same account within the organization only. */
  fingerprint?: string;
}

export interface VendorDetails {
  vendor_type: 'paypal';
  vendor_billing_agreement_token: string;
  vendor_billing_agreement_id: string;
}

/** A paymethod as it leaves the repository: no keys, no ciphertext. */
export interface Paymethod {
  paymethod_token: string;
  organization_id: string;
  /** Absent for locationless paymethods. */
  location_id?: string;
  customer_token?: string;
  customer_id?: string;
  billing_address_token?: string;
  label?: string;
  notes?: string;
  paymethod_type: PaymethodType;
  card?: CardDetails;
  echeck?: EcheckDetails;
  vendor?: VendorDetails;
  is_default: boolean;
  created_at: string;
  updated_at: string;
  /** Optimistic-lock counter; every write checks and bumps it. */
  version: number;
}

/**
 * A one-time token as it leaves its repository (the sealed number stays
 * inside). It never has a fingerprint: only a paymethod, which stores the
 * number, gets one (one-time-tokens.ts says why).
 */
export interface OneTimeToken {
  one_time_token: string;
  organization_id: string;
  location_id: string;
  paymethod_type: 'card' | 'echeck';
  card?: Omit<CardDetails, 'one_time_token' | 'au_code' | 'au_description' | 'au_updated_date' | 'fingerprint'>;
  echeck?: Omit<EcheckDetails, 'one_time_token' | 'fingerprint'>;
  created_at: string;
  expires_at: string;
  consumed_at?: string;
}
