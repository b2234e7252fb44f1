/**
 * The PayPal client-credentials secret in Secrets Manager: JSON
 * `{"client_id": "...", "client_secret": "..."}`. The stack creates it in that
 * shape with `client_id` set to PAYPAL_UNSET_CLIENT_ID, so a fresh stack answers
 * "PayPal is not configured" (503) until an operator stores the real pair
 * (`admin set-paypal-credentials`), instead of failing to parse.
 */
export const PAYPAL_UNSET_CLIENT_ID = 'unset';

export interface PaypalSecret {
  client_id: string;
  client_secret: string;
}

/** The stored pair, or undefined while the secret still holds the stack's placeholder or is malformed. */
export function parsePaypalSecret(secretString: string | undefined): PaypalSecret | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(secretString ?? '');
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { client_id: clientId, client_secret: clientSecret } = parsed as Record<string, unknown>;
  if (typeof clientId !== 'string' || typeof clientSecret !== 'string') return undefined;
  if (clientId === '' || clientSecret === '' || clientId === PAYPAL_UNSET_CLIENT_ID) return undefined;
  return { client_id: clientId, client_secret: clientSecret };
}
