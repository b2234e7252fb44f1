/**
 * Redaction applied to every log line: secrets are removed by member name, and
 * anything that looks like a card number or a Basic credential is masked
 * wherever it appears, so a value that slipped into a message or an error text
 * is caught too.
 */

const SECRET_MEMBER_NAMES = new Set([
  'account_number',
  'card_verification_value',
  'api_secure_key',
  'secure_key',
  'authorization',
  'plaintext',
  'data_key',
  'password',
  'client_secret',
]);

export const REDACTED = '[REDACTED]';

/** 12 to 19 digits, optionally grouped by spaces or dashes: the shape of a PAN (confirmed by Luhn). */
const PAN_LIKE = /\b\d(?:[ -]?\d){11,18}\b/g;
/** Members that hold AWS identifiers (a 12-digit account id may pass Luhn) and never card data. */
const AWS_IDENTIFIER_MEMBERS = new Set(['function_arn', 'xray_trace_id']);
const BASIC_CREDENTIAL = /\b(Basic|Bearer)\s+[A-Za-z0-9+/=._~-]+/gi;

export function isSecretMemberName(name: string): boolean {
  return SECRET_MEMBER_NAMES.has(name.toLowerCase());
}

export function redactText(text: string): string {
  return text.replace(PAN_LIKE, (candidate) => (passesLuhn(candidate.replace(/[ -]/g, '')) ? REDACTED : candidate)).replace(BASIC_CREDENTIAL, `$1 ${REDACTED}`);
}

function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let index = 0; index < digits.length; index++) {
    let digit = Number(digits[digits.length - 1 - index]);
    if (index % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
}

/** A JSON.stringify replacer: drop secret members by name, mask secret-shaped text everywhere. */
export function redactingReplacer(key: string, value: unknown): unknown {
  if (key && isSecretMemberName(key) && value !== undefined && value !== null) return REDACTED;
  if (typeof value === 'string' && !AWS_IDENTIFIER_MEMBERS.has(key)) return redactText(value);
  return value;
}
