/**
 * `admin set-paypal-credentials --client-id <id> [--stack <name>]`: stores
 * PayPal's REST client credentials in the PaypalCredentials secret the
 * functions read (the stack's, or the local runtime's in its Secrets Manager
 * stand-in), in their shape (shared/platform/paypal-secret.ts). The client secret
 * comes from standard input, never from the command line (ps, shell history).
 */
import type { Readable } from 'node:stream';
import { parsePaypalSecret } from '#shared/platform/paypal-secret.ts';
import { UsageError } from './cli.ts';

export interface SecretWriter {
  putSecretValue(input: { SecretId: string; SecretString: string }): Promise<unknown>;
}

export async function setPaypalCredentials(options: {
  clientId: string | undefined;
  secretArn: string | undefined;
  stdin: Readable;
  secrets: SecretWriter;
}): Promise<{ secret_arn: string; client_id: string; updated: true }> {
  if (!options.secretArn) {
    throw new UsageError('set-paypal-credentials needs the PayPal secret: run it where `npm start` runs (same PORT), pass --stack <name>, or set PAYPAL_SECRET_ARN');
  }
  if (!options.clientId) throw new UsageError('set-paypal-credentials needs --client-id <PayPal REST app client id>');
  const clientSecret = (await readAll(options.stdin)).trim();
  if (clientSecret === '') throw new UsageError('pipe the PayPal client secret on standard input, e.g. printf %s "$SECRET" | npm run --silent admin -- set-paypal-credentials ...');
  const secretString = JSON.stringify({ client_id: options.clientId, client_secret: clientSecret });
  // The functions would refuse this value (the stack's placeholder id, or an empty member): refuse it here.
  if (!parsePaypalSecret(secretString)) throw new UsageError(`"${options.clientId}" is not a PayPal client id`);
  await options.secrets.putSecretValue({ SecretId: options.secretArn, SecretString: secretString });
  return { secret_arn: options.secretArn, client_id: options.clientId, updated: true };
}

async function readAll(stream: Readable): Promise<string> {
  if ((stream as { isTTY?: boolean }).isTTY) return '';
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}
