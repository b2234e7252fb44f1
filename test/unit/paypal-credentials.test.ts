import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { paypalCredentials } from '#shared/aws/paypal.ts';
import { PAYPAL_UNSET_CLIENT_ID } from '#shared/platform/paypal-secret.ts';
import { config } from '#shared/runtime/config.ts';
import { functionContainer, runInContainer } from '#shared/runtime/container.ts';
import { Unavailable } from '#shared/domain/errors.ts';

const secretArn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:PaypalCredentials-abc';
const secretsManager = mockClient(SecretsManagerClient);
afterEach(() => secretsManager.reset());

describe('PayPal client credentials from Secrets Manager', () => {
  it('are read once per container', async () => {
    secretsManager.on(GetSecretValueCommand, { SecretId: secretArn }).resolves({ SecretString: JSON.stringify({ client_id: 'AXyz', client_secret: 'EKs' }) });
    const credentials = paypalCredentials({ secretArn });
    expect(await credentials()).toEqual({ clientId: 'AXyz', clientSecret: 'EKs' });
    expect(await credentials()).toEqual({ clientId: 'AXyz', clientSecret: 'EKs' });
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(1);
  });

  it("a fresh stack's placeholder is unavailable, naming the operator's command, and read again on the next request", async () => {
    secretsManager.on(GetSecretValueCommand).resolvesOnce({ SecretString: JSON.stringify({ client_id: PAYPAL_UNSET_CLIENT_ID, client_secret: 'unset' }) }).resolves({ SecretString: JSON.stringify({ client_id: 'AXyz', client_secret: 'EKs' }) });
    const credentials = paypalCredentials({ secretArn });
    const refused = await credentials().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Unavailable);
    expect((refused as Error).message).toMatch(/set-paypal-credentials/);
    expect(await credentials()).toEqual({ clientId: 'AXyz', clientSecret: 'EKs' });
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(2);
  });

  it('a failed read is not kept: the next request reads again', async () => {
    secretsManager.on(GetSecretValueCommand).rejectsOnce(Object.assign(new Error('throttled'), { name: 'ThrottlingException' })).resolves({ SecretString: JSON.stringify({ client_id: 'AXyz', client_secret: 'EKs' }) });
    const credentials = paypalCredentials({ secretArn });
    await expect(credentials()).rejects.toThrow('throttled');
    expect(await credentials()).toEqual({ clientId: 'AXyz', clientSecret: 'EKs' });
  });
});

describe('where a function finds its PayPal credentials', () => {
  const sourceIn = (environment: Record<string, string>) => runInContainer(functionContainer(environment), () => config.paypalCredentials);

  it('is the secret PAYPAL_SECRET_ARN names, locally as in AWS', () => {
    expect(sourceIn({ PAYPAL_SECRET_ARN: secretArn })).toEqual({ secretArn });
  });

  it('is never a pair of plain variables', () => {
    expect(() => sourceIn({ PAYPAL_CLIENT_ID: 'AXyz', PAYPAL_CLIENT_SECRET: 'EKs' })).toThrow('Missing required environment variable PAYPAL_SECRET_ARN');
    expect(sourceIn({ PAYPAL_SECRET_ARN: secretArn, PAYPAL_CLIENT_ID: 'AXyz', PAYPAL_CLIENT_SECRET: 'EKs' })).toEqual({ secretArn });
  });
});
