/**
 * Fingerprints: a keyed hash of an account number, so a merchant can see the
 * same card (or bank account) across its paymethods without the number. The
 * adapter (shared/aws/kms-fingerprints.ts) owns the key; the domain only says
 * what identifies an account and which organization the value is bound to.
 */

/** What makes two accounts the same: a card's number; an echeck's routing AND account number. */
export type AccountIdentity = { kind: 'card'; accountNumber: string } | { kind: 'echeck'; routingNumber: string; accountNumber: string };

export interface Fingerprinter {
  /** Equal for equal accounts within `organizationId`, unrelated across organizations; at most 64 characters. */
  fingerprint(organizationId: string, account: AccountIdentity): Promise<string>;
}

/** `fp_` and 43 base64url characters (a 256-bit HMAC). */
export const FINGERPRINT_PATTERN = /^fp_[A-Za-z0-9_-]{43}$/;

/** The fingerprint a record carries, whichever kind it is. */
export function fingerprintOf(record: { card?: { fingerprint?: string }; echeck?: { fingerprint?: string } }): string | undefined {
  return record.card?.fingerprint ?? record.echeck?.fingerprint;
}
