/**
 * A loopback-only stand-in for AWS Secrets Manager that speaks the service's
 * JSON 1.1 wire protocol, so the unmodified `@aws-sdk/client-secrets-manager`
 * reaches it through `AWS_ENDPOINT_URL_SECRETS_MANAGER` (or `endpoint`) and
 * the handlers read their secrets with the code they run in AWS. It serves
 * exactly the operations the code base sends (GetSecretValue from the
 * functions, PutSecretValue from `admin set-paypal-credentials`); the secrets
 * themselves are made at start, as the stack's deploy makes them. Secret ids
 * come in both forms (name or ARN), version staging labels move as Secrets
 * Manager moves them, and failures are its typed exceptions. Like every local
 * endpoint it is a gate (local/aws-json-standin.ts): every call is signed
 * (SigV4, checked as the service checks it, local/sigv4.ts) by a credential
 * the runtime issued. Values sit in memory (and, with `dataDir`, in a 0600
 * file), unencrypted.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { AwsJsonOperation, Body } from './aws-json-standin.ts';
import { startAwsJsonStandin } from './aws-json-standin.ts';
import type { Log } from './gate-server.ts';
import { AwsServiceError } from './gate-server.ts';
import { LOCAL_ACCOUNT_ID } from './lambda-context.ts';
import type { SignatureVerifier } from './sigv4.ts';
import { StandinDataFile } from './standin-data-file.ts';

export interface SecretsManagerStandinOptions {
  /** When set, secrets persist in `<dataDir>/secrets.json` across restarts. */
  dataDir?: string;
  /**
   * Created at start unless a secret of that name already exists (persisted in
   * `dataDir`): a value stored since is kept, as a deploy keeps a stored secret.
   */
  secrets?: Array<{ name: string; secretString: string }>;
  /** Checks each call's signature. */
  verifier: SignatureVerifier;
  log: Log;
}

export interface SecretsManagerStandin {
  url: string;
  /** Every secret named in the options, by name, including those reloaded from `dataDir`. */
  secrets: Record<string, { arn: string }>;
  close(): Promise<void>;
}

interface StoredVersion {
  versionId: string;
  secretString?: string;
  /** Base64, as the protocol carries blobs. */
  secretBinary?: string;
  stages: string[];
  /** Epoch seconds, which is how the JSON protocol carries timestamps. */
  createdDate: number;
}

interface StoredSecret {
  name: string;
  arn: string;
  versions: StoredVersion[];
}

interface PersistedData {
  version: 1;
  secrets: StoredSecret[];
}

type OperationName = 'GetSecretValue' | 'PutSecretValue';

const DATA_FILE = 'secrets.json';
const CURRENT = 'AWSCURRENT';
const PREVIOUS = 'AWSPREVIOUS';
const MAX_SECRET_BYTES = 65536;
const NAME_PATTERN = /^[A-Za-z0-9/_+=.@-]{1,512}$/;
// Secrets Manager ends every ARN with a hyphen and six random characters after the name.
const ARN_SUFFIX_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;


const notFound = (message = "Secrets Manager can't find the specified secret."): AwsServiceError => new AwsServiceError('ResourceNotFoundException', message);

function validationError(message: string): AwsServiceError {
  return new AwsServiceError('ValidationException', `1 validation error detected: ${message}`);
}

// ---------------------------------------------------------------------------
// Request field parsing. The SDK validates little on the client side, so the
// stand-in refuses what Secrets Manager would, or callers' bugs go unnoticed.

function optString(body: Body, name: string, maxLength: number, minLength = 1): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw validationError(`Value at '${name}' must be a string`);
  if (value.length < minLength || value.length > maxLength) {
    throw validationError(`Value at '${name}' failed to satisfy constraint: Member must have length between ${minLength} and ${maxLength}`);
  }
  return value;
}

function reqString(body: Body, name: string, maxLength: number): string {
  const value = optString(body, name, maxLength);
  if (value === undefined) throw validationError(`Value null at '${name}' failed to satisfy constraint: Member must not be null`);
  return value;
}

function stages(body: Body, name: string): string[] | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.length < 1 || value.length > 20 || value.some((stage) => typeof stage !== 'string' || stage.length < 1 || stage.length > 256)) {
    throw validationError(`Value at '${name}' failed to satisfy constraint: Member must be a list of 1 to 20 labels of 1 to 256 characters`);
  }
  return [...new Set(value as string[])];
}

/** SecretString or SecretBinary, exactly one, as PutSecretValue takes them. */
function secretValue(body: Body): Pick<StoredVersion, 'secretString' | 'secretBinary'> {
  const secretString = optString(body, 'SecretString', MAX_SECRET_BYTES, 0);
  const binary = body.SecretBinary;
  if (binary !== undefined && binary !== null && (typeof binary !== 'string' || !BASE64_PATTERN.test(binary))) {
    throw new AwsServiceError('SerializationException', "Value at 'SecretBinary' is not a valid base64 blob");
  }
  const secretBinary = typeof binary === 'string' ? binary : undefined;
  if (secretString !== undefined && secretBinary !== undefined) {
    throw new AwsServiceError('InvalidParameterException', 'You can\'t specify both a binary secret value and a string secret value in the same secret.');
  }
  if (secretBinary !== undefined && Buffer.from(secretBinary, 'base64').length > MAX_SECRET_BYTES) {
    throw validationError(`Value at 'SecretBinary' failed to satisfy constraint: Member must have length less than or equal to ${MAX_SECRET_BYTES}`);
  }
  if (secretString === undefined && secretBinary === undefined) throw new AwsServiceError('InvalidRequestException', 'You must provide either SecretString or SecretBinary.');
  return secretString !== undefined ? { secretString } : { secretBinary };
}

const sameValue = (version: StoredVersion, value: Pick<StoredVersion, 'secretString' | 'secretBinary'>): boolean =>
  version.secretString === value.secretString && version.secretBinary === value.secretBinary;

const now = (): number => Date.now() / 1000;

// ---------------------------------------------------------------------------
// Secret store

class SecretStore {
  readonly secrets = new Map<string, StoredSecret>();
  constructor(
    readonly region: string,
    readonly accountId: string,
    private readonly dataFile: StandinDataFile,
  ) {}

  async load(): Promise<void> {
    const stored = await this.dataFile.read();
    if (stored === undefined) return;
    // A damaged file stops the start-up: starting empty would quietly put the provisioned values back in place of stored ones.
    const data = stored as PersistedData;
    if (data?.version !== 1 || !Array.isArray(data.secrets)) throw new Error(`${this.dataFile.path} is not a Secrets Manager stand-in data file`);
    for (const secret of data.secrets) {
      if (typeof secret.name !== 'string' || !NAME_PATTERN.test(secret.name) || typeof secret.arn !== 'string' || !Array.isArray(secret.versions)) {
        throw new Error(`${this.dataFile.path} holds an invalid secret entry`);
      }
      this.secrets.set(secret.name, secret);
    }
  }

  persist(): Promise<void> {
    const data: PersistedData = { version: 1, secrets: [...this.secrets.values()] };
    return this.dataFile.write(data);
  }

  flushed(): Promise<void> {
    return this.dataFile.flushed();
  }

  create(name: string): StoredSecret {
    const suffix = Array.from(randomBytes(6), (byte) => ARN_SUFFIX_ALPHABET[byte % ARN_SUFFIX_ALPHABET.length]).join('');
    const secret: StoredSecret = { name, arn: `arn:aws:secretsmanager:${this.region}:${this.accountId}:secret:${name}-${suffix}`, versions: [] };
    this.secrets.set(name, secret);
    return secret;
  }

  /**
   * A new version, labelled `labels` (AWSCURRENT by default). The labels move
   * from whichever versions held them; the version that loses AWSCURRENT
   * takes AWSPREVIOUS, and a version left without labels is gone (Secrets
   * Manager deprecates it; nothing here reads deprecated versions).
   */
  addVersion(secret: StoredSecret, versionId: string, value: Pick<StoredVersion, 'secretString' | 'secretBinary'>, labels = [CURRENT]): StoredVersion {
    const moving = new Set(labels);
    if (moving.has(CURRENT)) {
      const current = secret.versions.find((version) => version.stages.includes(CURRENT));
      if (current) {
        for (const version of secret.versions) version.stages = version.stages.filter((stage) => stage !== PREVIOUS);
        current.stages.push(PREVIOUS);
      }
    }
    for (const version of secret.versions) version.stages = version.stages.filter((stage) => !moving.has(stage));
    const version: StoredVersion = { versionId, ...value, stages: [...moving], createdDate: now() };
    secret.versions = [...secret.versions.filter((existing) => existing.stages.length > 0), version];
    return version;
  }

  /** A secret by name, full ARN, or partial ARN (without the random suffix), as Secrets Manager accepts them. */
  resolve(secretId: string): StoredSecret {
    if (!secretId.startsWith('arn:')) {
      const secret = this.secrets.get(secretId);
      if (!secret) throw notFound();
      return secret;
    }
    const match = /^arn:[a-z-]+:secretsmanager:([^:]*):([^:]*):secret:(.+)$/.exec(secretId);
    if (!match || match[1] !== this.region || match[2] !== this.accountId) throw notFound();
    for (const secret of this.secrets.values()) {
      if (secret.arn === secretId || secret.arn.slice(0, -'-XXXXXX'.length) === secretId) return secret;
    }
    throw notFound();
  }
}

function operations(store: SecretStore): Map<OperationName, AwsJsonOperation<OperationName>> {
  const token = (body: Body): string => optString(body, 'ClientRequestToken', 64, 32) ?? randomUUID();

  return new Map<OperationName, AwsJsonOperation<OperationName>>([
    [
      'GetSecretValue',
      (body) => {
        const secret = store.resolve(reqString(body, 'SecretId', 2048));
        const versionId = optString(body, 'VersionId', 64, 32);
        const stage = optString(body, 'VersionStage', 256) ?? (versionId === undefined ? CURRENT : undefined);
        const version = secret.versions.find((candidate) => (versionId === undefined || candidate.versionId === versionId) && (stage === undefined || candidate.stages.includes(stage)));
        if (!version) {
          throw notFound(
            versionId === undefined
              ? `Secrets Manager can't find the specified secret value for staging label: ${stage}`
              : `Secrets Manager can't find the specified secret value for VersionId: ${versionId}`,
          );
        }
        return {
          ARN: secret.arn,
          Name: secret.name,
          VersionId: version.versionId,
          ...(version.secretString === undefined ? {} : { SecretString: version.secretString }),
          ...(version.secretBinary === undefined ? {} : { SecretBinary: version.secretBinary }),
          VersionStages: version.stages,
          CreatedDate: version.createdDate,
        };
      },
    ],
    [
      'PutSecretValue',
      async (body) => {
        const secret = store.resolve(reqString(body, 'SecretId', 2048));
        const value = secretValue(body);
        const labels = stages(body, 'VersionStages');
        const versionId = token(body);
        const existing = secret.versions.find((version) => version.versionId === versionId);
        if (existing) {
          // The SDK's retry of a write that landed: the same token and value are answered as the first time.
          if (!sameValue(existing, value)) throw new AwsServiceError('ResourceExistsException', "You can't modify an existing version, you can only create a new version.");
          return { ARN: secret.arn, Name: secret.name, VersionId: existing.versionId, VersionStages: existing.stages };
        }
        const version = store.addVersion(secret, versionId, value, labels);
        await store.persist();
        return { ARN: secret.arn, Name: secret.name, VersionId: version.versionId, VersionStages: version.stages };
      },
    ],
  ]);
}

// ---------------------------------------------------------------------------
// HTTP

export async function startSecretsManagerStandin(options: SecretsManagerStandinOptions): Promise<SecretsManagerStandin> {
  const store = new SecretStore('us-east-1', LOCAL_ACCOUNT_ID, new StandinDataFile(options.dataDir ? join(options.dataDir, DATA_FILE) : undefined));
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  await store.load();

  let created = false;
  for (const { name, secretString } of options.secrets ?? []) {
    if (!NAME_PATTERN.test(name)) throw new Error(`Invalid secret name ${name}`);
    if (store.secrets.has(name)) continue;
    store.addVersion(store.create(name), randomUUID(), { secretString });
    created = true;
  }
  if (created) await store.persist();

  // On a free port: only the functions and the CLIs call it, and they read its URL.
  const server = await startAwsJsonStandin({
    name: 'Secrets Manager',
    port: 0,
    service: { signingName: 'secretsmanager', targetPrefix: 'secretsmanager', unknownOperation: 'UnknownOperationException', internalError: { type: 'InternalServiceError', message: 'Internal error in the local Secrets Manager stand-in.' } },
    verifier: options.verifier,
    log: options.log,
    operations: operations(store),
    closed: () => store.flushed(),
  });

  const secrets: Record<string, { arn: string }> = {};
  for (const { name } of options.secrets ?? []) secrets[name] = { arn: store.resolve(name).arn };

  return { url: server.url, secrets, close: server.close };
}
