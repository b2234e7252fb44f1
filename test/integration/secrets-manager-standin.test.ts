import {
  GetSecretValueCommand,
  InvalidRequestException,
  PutSecretValueCommand,
  ResourceExistsException,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSecretsManagerStandin, type SecretsManagerStandin } from '#local/secrets-manager-standin.ts';
import { generateSigningCredentials } from '#local/signing-credentials.ts';
import { signatureVerifier } from '#local/sigv4.ts';
import { signedFetch } from '../support/signed-fetch.ts';

/** The stand-in checks every signature: these tests sign as the operator. */
const signing = generateSigningCredentials([]);
const verifier = signatureVerifier(signing);
const log = () => undefined;

const NAME = 'PaypalCredentials';
const INITIAL = JSON.stringify({ client_id: 'local-paypal-client', client_secret: 'local-paypal-secret' });

function clientFor(url: string): SecretsManagerClient {
  return new SecretsManagerClient({ endpoint: url, region: 'us-east-1', credentials: signing.operator, maxAttempts: 1 });
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the call to fail');
}

describe('Secrets Manager stand-in with @aws-sdk/client-secrets-manager', () => {
  let standin: SecretsManagerStandin;
  let secrets: SecretsManagerClient;
  let arn: string;

  beforeAll(async () => {
    standin = await startSecretsManagerStandin({ secrets: [{ name: NAME, secretString: INITIAL }], verifier, log });
    secrets = clientFor(standin.url);
    arn = standin.secrets[NAME]!.arn;
  });

  afterAll(async () => {
    secrets?.destroy();
    await standin?.close();
  });

  it('creates the secrets it is given, with ARNs in Secrets Manager form', () => {
    expect(arn).toMatch(/^arn:aws:secretsmanager:us-east-1:000000000000:secret:PaypalCredentials-[A-Za-z0-9]{6}$/);
  });

  it('answers GetSecretValue by name, ARN and partial ARN with the current version', async () => {
    for (const secretId of [NAME, arn, arn.slice(0, -7)]) {
      const answer = await secrets.send(new GetSecretValueCommand({ SecretId: secretId }));
      expect(answer).toMatchObject({ ARN: arn, Name: NAME, SecretString: INITIAL, VersionStages: ['AWSCURRENT'] });
      expect(answer.VersionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(answer.CreatedDate).toBeInstanceOf(Date);
    }
  });

  it('makes a PutSecretValue the current version and the one before AWSPREVIOUS; a retried put is answered once', async () => {
    const { SecretString: before, VersionId: beforeId } = await secrets.send(new GetSecretValueCommand({ SecretId: NAME }));
    const value = JSON.stringify({ client_id: 'AXput', client_secret: 'EKput' });
    const token = randomUUID();
    const put = await secrets.send(new PutSecretValueCommand({ SecretId: arn, SecretString: value, ClientRequestToken: token }));
    expect(put).toMatchObject({ ARN: arn, Name: NAME, VersionId: token, VersionStages: ['AWSCURRENT'] });

    expect((await secrets.send(new GetSecretValueCommand({ SecretId: NAME }))).SecretString).toBe(value);
    const previous = await secrets.send(new GetSecretValueCommand({ SecretId: NAME, VersionStage: 'AWSPREVIOUS' }));
    expect(previous).toMatchObject({ SecretString: before, VersionId: beforeId, VersionStages: ['AWSPREVIOUS'] });
    expect((await secrets.send(new GetSecretValueCommand({ SecretId: NAME, VersionId: token }))).SecretString).toBe(value);

    // The SDK retries with the same token: the same value is the same version, another value is refused.
    expect(await secrets.send(new PutSecretValueCommand({ SecretId: NAME, SecretString: value, ClientRequestToken: token }))).toMatchObject({ VersionId: token });
    expect(await failure(secrets.send(new PutSecretValueCommand({ SecretId: NAME, SecretString: 'other', ClientRequestToken: token })))).toBeInstanceOf(ResourceExistsException);
    expect(await failure(secrets.send(new PutSecretValueCommand({ SecretId: NAME })))).toBeInstanceOf(InvalidRequestException);
    expect((await secrets.send(new GetSecretValueCommand({ SecretId: NAME }))).SecretString).toBe(value);
  });

  it('answers ResourceNotFoundException for an unknown name, an unknown ARN and an ARN of another account or region', async () => {
    const unknown = [
      'NoSuchSecret',
      `${arn.slice(0, -6)}zzzzzz`,
      arn.replace(':000000000000:', ':111111111111:'),
      arn.replace(':us-east-1:', ':eu-west-1:'),
    ];
    for (const secretId of unknown) {
      for (const command of [new GetSecretValueCommand({ SecretId: secretId }), new PutSecretValueCommand({ SecretId: secretId, SecretString: 'x' })]) {
        const error = await failure(secrets.send(command as GetSecretValueCommand));
        expect(error, secretId).toBeInstanceOf(ResourceNotFoundException);
        expect(error.message).toBe("Secrets Manager can't find the specified secret.");
      }
    }
    const noSuchStage = await failure(secrets.send(new GetSecretValueCommand({ SecretId: NAME, VersionStage: 'AWSPENDING' })));
    expect(noSuchStage).toBeInstanceOf(ResourceNotFoundException);
  });

  it('refuses an unsigned call, a wrong signature and a key it never issued, as Secrets Manager does', async () => {
    const headers = { 'Content-Type': 'application/x-amz-json-1.1', 'X-Amz-Target': 'secretsmanager.GetSecretValue' };
    const body = JSON.stringify({ SecretId: NAME });
    const answers = [
      await fetch(standin.url, { method: 'POST', headers, body }),
      await signedFetch(standin.url, { headers, body }, { ...signing.operator, secretAccessKey: 'not-the-secret' }, 'secretsmanager'),
      await signedFetch(standin.url, { headers, body }, generateSigningCredentials([]).operator, 'secretsmanager'),
    ];
    const refusals = await Promise.all(answers.map(async (answer) => ({ status: answer.status, body: await answer.text() })));
    expect(refusals.map(({ status, body: text }) => [status, (JSON.parse(text) as { __type: string }).__type])).toEqual([
      [400, 'MissingAuthenticationTokenException'],
      [400, 'InvalidSignatureException'],
      [400, 'UnrecognizedClientException'],
    ]);
    // Nothing of the secret in any refusal.
    for (const { body: text } of refusals) expect(text).not.toContain(INITIAL);
  });

  it('speaks the JSON 1.1 error shape to any client, and refuses every operation the code base does not send', async () => {
    const post = (target: string, body: unknown) =>
      signedFetch(standin.url, { headers: { 'Content-Type': 'application/x-amz-json-1.1', 'X-Amz-Target': target }, body: JSON.stringify(body) }, signing.operator, 'secretsmanager');
    const missing = await post('secretsmanager.GetSecretValue', { SecretId: 'NoSuchSecret' });
    expect(missing.status).toBe(400);
    expect(missing.headers.get('content-type')).toBe('application/x-amz-json-1.1');
    expect(await missing.json()).toEqual({ __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." });
    for (const operation of ['DeleteSecret', 'DescribeSecret', 'CreateSecret']) {
      const other = await post(`secretsmanager.${operation}`, { SecretId: NAME, Name: 'another' });
      expect(other.status, operation).toBe(400);
      expect(await other.json(), operation).toMatchObject({ __type: 'UnknownOperationException' });
    }
    expect((await post('secretsmanager.GetSecretValue', {})).status).toBe(400);
  });
});

describe('Secrets Manager stand-in with a data directory', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'secrets-standin-'));
  });

  afterAll(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps secrets and stored values across a restart; what it was told to create is not put back', async () => {
    const options = { dataDir, secrets: [{ name: NAME, secretString: INITIAL }], verifier, log };
    const first = await startSecretsManagerStandin(options);
    const firstClient = clientFor(first.url);
    const stored = JSON.stringify({ client_id: 'AXoperator', client_secret: 'EKoperator' });
    await firstClient.send(new PutSecretValueCommand({ SecretId: first.secrets[NAME]!.arn, SecretString: stored }));
    firstClient.destroy();
    await first.close();

    expect((await stat(join(dataDir, 'secrets.json'))).mode & 0o777).toBe(0o600);

    const second = await startSecretsManagerStandin(options);
    const secondClient = clientFor(second.url);
    try {
      expect(second.secrets[NAME]!.arn).toBe(first.secrets[NAME]!.arn);
      expect((await secondClient.send(new GetSecretValueCommand({ SecretId: NAME }))).SecretString).toBe(stored);
      expect((await secondClient.send(new GetSecretValueCommand({ SecretId: NAME, VersionStage: 'AWSPREVIOUS' }))).SecretString).toBe(INITIAL);
    } finally {
      secondClient.destroy();
      await second.close();
    }
  });

  it('keeps nothing without one', async () => {
    const first = await startSecretsManagerStandin({ secrets: [{ name: NAME, secretString: INITIAL }], verifier, log });
    const client = clientFor(first.url);
    await client.send(new PutSecretValueCommand({ SecretId: NAME, SecretString: 'changed' }));
    client.destroy();
    await first.close();
    const second = await startSecretsManagerStandin({ secrets: [{ name: NAME, secretString: INITIAL }], verifier, log });
    const again = clientFor(second.url);
    try {
      expect(second.secrets[NAME]!.arn).not.toBe(first.secrets[NAME]!.arn);
      expect((await again.send(new GetSecretValueCommand({ SecretId: NAME }))).SecretString).toBe(INITIAL);
    } finally {
      again.destroy();
      await second.close();
    }
  });

  it('refuses to start on a damaged data file rather than start empty', async () => {
    const damaged = await mkdtemp(join(tmpdir(), 'secrets-standin-damaged-'));
    try {
      await writeFile(join(damaged, 'secrets.json'), '{"version": 1, "secrets": [{"name": 7}]}');
      await expect(startSecretsManagerStandin({ dataDir: damaged, secrets: [{ name: NAME, secretString: INITIAL }], verifier, log })).rejects.toThrow(/invalid secret entry/);
      expect(JSON.parse(await readFile(join(damaged, 'secrets.json'), 'utf8'))).toEqual({ version: 1, secrets: [{ name: 7 }] });
    } finally {
      await rm(damaged, { recursive: true, force: true });
    }
  });
});
