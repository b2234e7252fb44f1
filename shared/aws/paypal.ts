import { InvalidRequest, Unavailable } from '#shared/domain/errors.ts';
import type { PaypalCredentialSource } from '#shared/platform/function-environment.ts';
import type { BillingAgreements } from '#shared/domain/paymethods/ports.ts';
import { SECRETS_MANAGER_BUDGET, awsClient } from './client-config.ts';
import { remainingMs } from '../runtime/deadline.ts';
import { parsePaypalSecret } from '../platform/paypal-secret.ts';

/** PayPal's one attempt is cut here, or at the request deadline if that comes first. */
export const PAYPAL_TIMEOUT_MS = 5_000;

export interface PaypalClientCredentials {
  clientId: string;
  clientSecret: string;
}

export interface PaypalOptions {
  apiUrl: string;
  /** Loaded once per container, from Secrets Manager (see paypalCredentials). */
  credentials: () => Promise<PaypalClientCredentials>;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/**
 * PayPal billing agreements over REST: a client-credentials token (cached
 * until shortly before it expires), then POST /v1/billing-agreements/agreements
 * {token_id} -> {id}. PayPal's 4xx on the agreement means it refuses the token
 * (400 to our client); network failures, timeouts and 5xx mean it is
 * unreachable (503).
 */
export class PaypalBillingAgreements implements BillingAgreements {
  private accessToken: { value: string; expiresAt: number } | undefined;

  constructor(private readonly options: PaypalOptions) {}

  async createAgreement(billingAgreementToken: string): Promise<string> {
    const response = await this.post('/v1/billing-agreements/agreements', {
      headers: { Authorization: `Bearer ${await this.token()}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ token_id: billingAgreementToken }),
    });
    if (response.status === 401) this.accessToken = undefined; // revoked or expired early: the next call fetches a new one
    if (response.status >= 400 && response.status < 500 && response.status !== 401 && response.status !== 429) {
      throw new InvalidRequest([{ field: 'vendor.vendor_billing_agreement_token', message: 'was refused by PayPal' }], 'VENDOR_REFUSED');
    }
    const body = (await response.json().catch(() => undefined)) as { id?: unknown } | undefined;
    if (!response.ok || typeof body?.id !== 'string') throw new Unavailable('PayPal is temporarily unavailable; retry later');
    return body.id;
  }

  private async token(): Promise<string> {
    if (this.accessToken && this.accessToken.expiresAt > Date.now()) return this.accessToken.value;
    const { clientId, clientSecret } = await this.options.credentials();
    const response = await this.post('/v1/oauth2/token', {
      headers: { Authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    const body = (await response.json().catch(() => undefined)) as { access_token?: unknown; expires_in?: unknown } | undefined;
    // Our credentials being refused is our fault, not the client's: 503 and an alarm-worthy log upstream.
    if (!response.ok || typeof body?.access_token !== 'string') throw new Unavailable('PayPal is temporarily unavailable; retry later');
    const lifetimeSeconds = typeof body.expires_in === 'number' ? body.expires_in : 300;
    this.accessToken = { value: body.access_token, expiresAt: Date.now() + Math.max(0, lifetimeSeconds - 60) * 1000 };
    return body.access_token;
  }

  /**
   * One attempt, no retry (creating an agreement is not idempotent on PayPal's
   * side), cut at 5 s or at the request deadline, whichever comes first.
   */
  private async post(path: string, init: { headers: Record<string, string>; body: string }): Promise<Response> {
    const left = remainingMs();
    if (left !== undefined && left <= 0) throw new Unavailable('PayPal could not be called before the request deadline; retry later');
    try {
      return await (this.options.fetch ?? fetch)(`${this.options.apiUrl.replace(/\/+$/, '')}${path}`, {
        method: 'POST',
        ...init,
        signal: AbortSignal.timeout(Math.min(this.options.timeoutMs ?? PAYPAL_TIMEOUT_MS, left ?? Infinity)),
      });
    } catch (error) {
      throw new Unavailable('PayPal is unreachable; retry later', 1, { cause: error });
    }
  }
}

/**
 * Client credentials from Secrets Manager: a JSON secret {client_id,
 * client_secret}, fetched once per container (the SDK is loaded only then).
 * Locally the runtime gives the functions such a secret in its Secrets Manager stand-in.
 */
export function paypalCredentials(source: PaypalCredentialSource): () => Promise<PaypalClientCredentials> {
  let loaded: Promise<PaypalClientCredentials> | undefined;
  return () => {
    loaded ??= load().catch((error: unknown) => {
      loaded = undefined; // a failed fetch is retried on the next request
      throw error;
    });
    return loaded;
  };

  async function load(): Promise<PaypalClientCredentials> {
    const { SecretsManagerClient, GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
    const client = awsClient(SecretsManagerClient, 'Secrets Manager', SECRETS_MANAGER_BUDGET);
    const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: source.secretArn }));
    const secret = parsePaypalSecret(SecretString);
    // A fresh stack's placeholder, or a hand-edited secret of another shape: an operator's task, not the client's.
    if (!secret) throw new Unavailable('PayPal is not configured: store {"client_id", "client_secret"} with `admin set-paypal-credentials`');
    return { clientId: secret.client_id, clientSecret: secret.client_secret };
  }
}
