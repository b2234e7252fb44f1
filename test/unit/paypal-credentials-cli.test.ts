import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { setPaypalCredentials } from '../../scripts/paypal-credentials.ts';
import { UsageError } from '../../scripts/cli.ts';
import { parsePaypalSecret } from '#shared/platform/paypal-secret.ts';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:PaypalCredentials-abc';

function recorder() {
  const calls: { SecretId: string; SecretString: string }[] = [];
  return { calls, secrets: { putSecretValue: async (input: { SecretId: string; SecretString: string }) => void calls.push(input) } };
}

describe('admin set-paypal-credentials', () => {
  it('stores the pair in the shape the functions read, taking the secret from standard input', async () => {
    const { calls, secrets } = recorder();
    const result = await setPaypalCredentials({ clientId: 'AXyz123', secretArn: SECRET_ARN, stdin: Readable.from(['EKsecret-value\n']), secrets });
    expect(result).toEqual({ secret_arn: SECRET_ARN, client_id: 'AXyz123', updated: true });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.SecretId).toBe(SECRET_ARN);
    expect(parsePaypalSecret(calls[0]!.SecretString)).toEqual({ client_id: 'AXyz123', client_secret: 'EKsecret-value' });
    // The secret is never echoed back.
    expect(JSON.stringify(result)).not.toContain('EKsecret');
  });

  it('refuses without a secret to write to, a client id, a secret on stdin, or with the placeholder id, writing nothing', async () => {
    const { calls, secrets } = recorder();
    const attempt = (clientId: string | undefined, secretArn: string | undefined, input: string[]) =>
      setPaypalCredentials({ clientId, secretArn, stdin: Readable.from(input), secrets });
    await expect(attempt('AXyz', undefined, ['s'])).rejects.toThrow(/npm start.*--stack.*PAYPAL_SECRET_ARN/);
    await expect(attempt(undefined, SECRET_ARN, ['s'])).rejects.toThrow(/--client-id/);
    await expect(attempt('AXyz', SECRET_ARN, ['  \n'])).rejects.toThrow(/standard input/);
    await expect(attempt('unset', SECRET_ARN, ['s'])).rejects.toBeInstanceOf(UsageError);
    expect(calls).toEqual([]);
  });
});
