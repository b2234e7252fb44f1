/**
 * A loopback-only stand-in for AWS Secrets Manager that speaks the service's
 * JSON 1.1 wire protocol, so the unmodified `@aws-sdk/client-secrets-manager`
 * reaches it through `AWS_ENDPOINT_URL_SECRETS_MANAGER` (or `endpoint`) and
 * the handlers read their secrets with the code they run in AWS. It serves
 * what the service and its CLIs use (GetSecretValue, PutSecretValue,
 * DescribeSecret, CreateSecret), with secret ids in both forms (name or ARN),
 * version staging labels as Secrets Manager moves them and its typed
 * exceptions. It is not a security boundary: values sit in memory (and, with
 * `dataDir`, in a plain 0600 file), nothing is encrypted and signatures are
 * not checked.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export interface SecretsManagerStandinOptions {
  /** 0 (the default) picks an ephemeral port. */
  port?: number;
  host?: string;
  /** When set, secrets persist in `<dataDir>/secrets.json` across restarts. */
  dataDir?: string;
  /**
   * Created at start unless a secret of that name already exists (persisted in
   * `dataDir`): a value stored since is kept, as a deploy keeps a stored secret.
   */
  secrets?: Array<{ name: string; secretString: string; description?: string }>;
  region?: string;
  accountId?: string;
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
  description?: string;
  createdDate: number;
  lastChangedDate: number;
  versions: StoredVersion[];
}

interface PersistedData {
  version: 1;
  secrets: StoredSecret[];
}

type Body = Record<string, unknown>;
type Operation = (body: Body) => Promise<Body> | Body;

const MAX_BODY_BYTES = 1024 * 1024;
const DATA_FILE = 'secrets.json';
const JSON_CONTENT_TYPE = 'application/x-amz-json-1.1';
const CURRENT = 'AWSCURRENT';
const PREVIOUS = 'AWSPREVIOUS';
const MAX_SECRET_BYTES = 65536;
const NAME_PATTERN = /^[A-Za-z0-9/_+=.@-]{1,512}$/;
// Secrets Manager ends every ARN with a hyphen and six random characters after the name.
const ARN_SUFFIX_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

class SecretsManagerError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

const notFound = (message = "Secrets Manager can't find the specified secret."): SecretsManagerError => new SecretsManagerError('ResourceNotFoundException', message);

function validationError(message: string): SecretsManagerError {
  return new SecretsManagerError('ValidationException', `1 validation error detected: ${message}`);
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

/** SecretString or SecretBinary, exactly one, as PutSecretValue takes them (CreateSecret may take neither). */
function secretValue(body: Body, required: boolean): Pick<StoredVersion, 'secretString' | 'secretBinary'> | undefined {
  const secretString = optString(body, 'SecretString', MAX_SECRET_BYTES, 0);
  const binary = body.SecretBinary;
  if (binary !== undefined && binary !== null && (typeof binary !== 'string' || !BASE64_PATTERN.test(binary))) {
    throw new SecretsManagerError('SerializationException', "Value at 'SecretBinary' is not a valid base64 blob");
  }
  const secretBinary = typeof binary === 'string' ? binary : undefined;
  if (secretString !== undefined && secretBinary !== undefined) {
    throw new SecretsManagerError('InvalidParameterException', 'You can\'t specify both a binary secret value and a string secret value in the same secret.');
  }
  if (secretBinary !== undefined && Buffer.from(secretBinary, 'base64').length > MAX_SECRET_BYTES) {
    throw validationError(`Value at 'SecretBinary' failed to satisfy constraint: Member must have length less than or equal to ${MAX_SECRET_BYTES}`);
  }
  if (secretString === undefined && secretBinary === undefined) {
    if (required) throw new SecretsManagerError('InvalidRequestException', 'You must provide either SecretString or SecretBinary.');
    return undefined;
  }
  return secretString !== undefined ? { secretString } : { secretBinary };
}

const sameValue = (version: StoredVersion, value: Pick<StoredVersion, 'secretString' | 'secretBinary'>): boolean =>
  version.secretString === value.secretString && version.secretBinary === value.secretBinary;

const now = (): number => Date.now() / 1000;

// ---------------------------------------------------------------------------
// Secret store

class SecretStore {
  readonly secrets = new Map<string, StoredSecret>();
  private saving: Promise<void> = Promise.resolve();

  constructor(
    readonly region: string,
    readonly accountId: string,
    private readonly file: string | undefined,
  ) {}

  async load(): Promise<void> {
    if (!this.file) return;
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    // A damaged file stops the start-up: starting empty would quietly put the provisioned values back in place of stored ones.
    const data = JSON.parse(text) as PersistedData;
    if (data?.version !== 1 || !Array.isArray(data.secrets)) throw new Error(`${this.file} is not a Secrets Manager stand-in data file`);
    for (const secret of data.secrets) {
      if (typeof secret.name !== 'string' || !NAME_PATTERN.test(secret.name) || typeof secret.arn !== 'string' || !Array.isArray(secret.versions)) {
        throw new Error(`${this.file} holds an invalid secret entry`);
      }
      this.secrets.set(secret.name, secret);
    }
  }

  /**
   * Writes are chained so an older snapshot can never land after a newer one,
   * and go through a rename so a crash mid-write cannot truncate the file.
   */
  persist(): Promise<void> {
    const file = this.file;
    if (!file) return Promise.resolve();
    const data: PersistedData = { version: 1, secrets: [...this.secrets.values()] };
    const text = `${JSON.stringify(data, null, 2)}\n`;
    const write = this.saving.then(async () => {
      const temporary = `${file}.${process.pid}.tmp`;
      await writeFile(temporary, text, { mode: 0o600 });
      await rename(temporary, file);
    });
    this.saving = write.catch(() => undefined);
    return write;
  }

  flushed(): Promise<void> {
    return this.saving;
  }

  create(name: string, description: string | undefined): StoredSecret {
    const suffix = Array.from(randomBytes(6), (byte) => ARN_SUFFIX_ALPHABET[byte % ARN_SUFFIX_ALPHABET.length]).join('');
    const created = now();
    const secret: StoredSecret = {
      name,
      arn: `arn:aws:secretsmanager:${this.region}:${this.accountId}:secret:${name}-${suffix}`,
      ...(description === undefined ? {} : { description }),
      createdDate: created,
      lastChangedDate: created,
      versions: [],
    };
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
    secret.lastChangedDate = version.createdDate;
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

function versionIdsToStages(secret: StoredSecret): Record<string, string[]> {
  return Object.fromEntries(secret.versions.map((version) => [version.versionId, version.stages]));
}

function operations(store: SecretStore): Map<string, Operation> {
  const token = (body: Body): string => optString(body, 'ClientRequestToken', 64, 32) ?? randomUUID();

  return new Map<string, Operation>([
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
        const value = secretValue(body, true) as Pick<StoredVersion, 'secretString' | 'secretBinary'>;
        const labels = stages(body, 'VersionStages');
        const versionId = token(body);
        const existing = secret.versions.find((version) => version.versionId === versionId);
        if (existing) {
          // The SDK's retry of a write that landed: the same token and value are answered as the first time.
          if (!sameValue(existing, value)) throw new SecretsManagerError('ResourceExistsException', "You can't modify an existing version, you can only create a new version.");
          return { ARN: secret.arn, Name: secret.name, VersionId: existing.versionId, VersionStages: existing.stages };
        }
        const version = store.addVersion(secret, versionId, value, labels);
        await store.persist();
        return { ARN: secret.arn, Name: secret.name, VersionId: version.versionId, VersionStages: version.stages };
      },
    ],
    [
      'DescribeSecret',
      (body) => {
        const secret = store.resolve(reqString(body, 'SecretId', 2048));
        return {
          ARN: secret.arn,
          Name: secret.name,
          ...(secret.description === undefined ? {} : { Description: secret.description }),
          CreatedDate: secret.createdDate,
          LastChangedDate: secret.lastChangedDate,
          VersionIdsToStages: versionIdsToStages(secret),
        };
      },
    ],
    [
      'CreateSecret',
      async (body) => {
        const name = reqString(body, 'Name', 512);
        if (!NAME_PATTERN.test(name)) throw new SecretsManagerError('InvalidParameterException', 'Invalid name. Must be a valid name containing alphanumeric characters, or any of the following: -/_+=.@!');
        const description = optString(body, 'Description', 2048, 0);
        const value = secretValue(body, false);
        const versionId = token(body);
        const existing = store.secrets.get(name);
        if (existing) {
          // A retried create that landed carries the same token and value.
          const same = existing.versions.find((version) => version.versionId === versionId);
          if (value && same && sameValue(same, value)) return { ARN: existing.arn, Name: existing.name, VersionId: same.versionId };
          throw new SecretsManagerError('ResourceExistsException', `The operation failed because the secret ${name} already exists.`);
        }
        const secret = store.create(name, description);
        const version = value ? store.addVersion(secret, versionId, value) : undefined;
        await store.persist();
        return { ARN: secret.arn, Name: secret.name, ...(version ? { VersionId: version.versionId } : {}) };
      },
    ],
  ]);
}

// ---------------------------------------------------------------------------
// HTTP

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const tooLarge = (): SecretsManagerError => new SecretsManagerError('ValidationException', `Request body exceeds ${MAX_BODY_BYTES} bytes.`, 413);
    if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) {
      req.resume();
      reject(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    req.on('data', (chunk: Buffer) => {
      if (settled) return; // keep draining, but stop buffering
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        settled = true;
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks));
    });
    req.on('error', (error) => {
      if (settled) return;
      settled = true;
      reject(error);
    });
  });
}

function send(res: ServerResponse, status: number, requestId: string, payload: Body, errorType?: string): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(payload);
  const headers: Record<string, string | number> = {
    'Content-Type': JSON_CONTENT_TYPE,
    'Content-Length': Buffer.byteLength(text),
    'x-amzn-RequestId': requestId,
  };
  if (errorType) headers['x-amzn-ErrorType'] = errorType;
  // An oversized body may still be arriving; closing is cheaper than draining it.
  if (status === 413) headers.Connection = 'close';
  res.writeHead(status, headers);
  res.end(text);
}

export async function startSecretsManagerStandin(options: SecretsManagerStandinOptions = {}): Promise<SecretsManagerStandin> {
  const host = options.host ?? '127.0.0.1';
  const store = new SecretStore(options.region ?? 'us-east-1', options.accountId ?? '000000000000', options.dataDir ? join(options.dataDir, DATA_FILE) : undefined);
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  await store.load();

  let created = false;
  for (const { name, secretString, description } of options.secrets ?? []) {
    if (!NAME_PATTERN.test(name)) throw new Error(`Invalid secret name ${name}`);
    if (store.secrets.has(name)) continue;
    store.addVersion(store.create(name, description), randomUUID(), { secretString });
    created = true;
  }
  if (created) await store.persist();

  const handlers = operations(store);

  const handle = async (req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> => {
    if (req.method !== 'POST') {
      req.resume();
      throw new SecretsManagerError('UnknownOperationException', 'Only POST requests are supported.', 405);
    }
    const raw = await readBody(req);
    const targetHeader = req.headers['x-amz-target'];
    const target = Array.isArray(targetHeader) ? targetHeader[0] : targetHeader;
    const operationName = /^secretsmanager\.([A-Za-z]+)$/.exec(target ?? '')?.[1];
    const operation = operationName === undefined ? undefined : handlers.get(operationName);
    if (operation === undefined) throw new SecretsManagerError('UnknownOperationException', `Unsupported operation ${target ?? '(missing X-Amz-Target)'}.`);

    let body: unknown = {};
    const text = raw.toString('utf8').trim();
    if (text.length > 0) {
      try {
        body = JSON.parse(text);
      } catch {
        throw new SecretsManagerError('SerializationException', 'The request body is not valid JSON.');
      }
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new SecretsManagerError('SerializationException', 'The request body must be a JSON object.');
    send(res, 200, requestId, await operation(body as Body));
  };

  const server = createServer((req, res) => {
    const requestId = randomUUID();
    handle(req, res, requestId).catch((error: unknown) => {
      if (error instanceof SecretsManagerError) {
        send(res, error.status, requestId, { __type: error.type, message: error.message }, error.type);
        return;
      }
      // Anything else is a stand-in bug; report it the way AWS reports its own.
      console.error('Secrets Manager stand-in internal error', error);
      send(res, 500, requestId, { __type: 'InternalServiceError', message: 'Internal error in the local Secrets Manager stand-in.' }, 'InternalServiceError');
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  const secrets: Record<string, { arn: string }> = {};
  for (const { name } of options.secrets ?? []) secrets[name] = { arn: store.resolve(name).arn };

  return {
    url: `http://${urlHost}:${port}`,
    secrets,
    async close() {
      const closed = new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
      // Keep-alive sockets from SDK clients would otherwise hold close() open.
      server.closeAllConnections();
      await closed;
      await store.flushed();
    },
  };
}
