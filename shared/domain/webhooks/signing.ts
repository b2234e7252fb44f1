import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks 1.0 signatures, in the few lines the spec takes
 * (node:crypto's HMAC): `v1,<base64 HMAC-SHA256>` over
 * `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the bytes the secret's
 * base64 after `whsec_` holds. The `standardwebhooks` package would add its
 * own base64 dependency to the sender's bundle for the same HMAC; its
 * verifier checks ours in the tests.
 */
export const SECRET_PREFIX = 'whsec_';

/** `whsec_` + the base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

export function signature(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The `webhook-signature` header: one entry per secret in force, space-separated. */
export function signatureHeader(secrets: readonly string[], messageId: string, timestampSeconds: number, body: string): string {
  return secrets.map((secret) => signature(secret, messageId, timestampSeconds, body)).join(' ');
}
