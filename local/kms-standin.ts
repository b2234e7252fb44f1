/**
 * A loopback-only stand-in for AWS KMS that speaks the service's JSON 1.1 wire
 * protocol, so the unmodified `@aws-sdk/client-kms` can be pointed at it with
 * `AWS_ENDPOINT_URL_KMS` (or `endpoint`) and the handlers run exactly the code
 * paths they run against AWS. It serves the three operations the code base
 * sends (GenerateDataKey, Decrypt, GenerateMac). Like every local endpoint it
 * is a gate (local/aws-json-standin.ts): every call is signed (SigV4, checked
 * as KMS checks it, local/sigv4.ts) by a credential the runtime issued, and a
 * function may use a key only as its key grants (shared/platform/key-grants.ts,
 * the same data CDK turns into its policies) allow; its emulator, the key
 * store and operations below, is in this process. Key material sits in memory
 * (and, with `dataDir`, in an owner-only file). What it keeps faithful is the
 * behaviour callers rely on for correctness: encryption context binding, key
 * usage separation, key id forms and the typed exceptions.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { GrantedKey, KeyGrant } from '#shared/platform/key-grants.ts';
import { keyGrantsAllow } from '#shared/platform/key-grants.ts';
import type { AwsJsonOperation, Body } from './aws-json-standin.ts';
import { startAwsJsonStandin } from './aws-json-standin.ts';
import { grantsOf, logRefusal, notAuthorized } from './function-identity.ts';
import type { GateOptions } from './gate-server.ts';
import { AwsServiceError } from './gate-server.ts';
import { LOCAL_ACCOUNT_ID } from './lambda-context.ts';
import type { Principal } from './signing-credentials.ts';
import { StandinDataFile } from './standin-data-file.ts';

export type KmsStandinKeySpec = 'SYMMETRIC_DEFAULT' | 'HMAC_256';
type KeyUsage = 'ENCRYPT_DECRYPT' | 'GENERATE_VERIFY_MAC';

/** `resources`: which granted key each alias is; a key no alias of which is granted is no function's to use. */
export interface KmsStandinOptions extends GateOptions<GrantedKey, KeyGrant> {
  /** When set, key material persists in `<dataDir>/kms-keys.json` across restarts. */
  readonly dataDir?: string;
  /** Created at start unless the alias already exists in the persisted data. */
  readonly keys: ReadonlyArray<{ alias: string; keySpec: KmsStandinKeySpec }>;
}

export interface KmsStandin {
  url: string;
  /** Every alias known at start, including those reloaded from `dataDir`. */
  keys: Record<string, { keyId: string; arn: string }>;
  /** Requests per operation name; a live object, cleared in place by `resetCalls`. */
  calls: Record<string, number>;
  resetCalls(): void;
  close(): Promise<void>;
}

interface StoredKey {
  keyId: string;
  keySpec: KmsStandinKeySpec;
  keyUsage: KeyUsage;
  description: string;
  /** Epoch seconds, which is how the JSON protocol carries timestamps. */
  creationDate: number;
  material: Buffer;
}

interface PersistedData {
  version: 1;
  keys: Array<Omit<StoredKey, 'material'> & { material: string }>;
  aliases: Record<string, string>;
}

type OperationName = 'GenerateDataKey' | 'Decrypt' | 'GenerateMac';
/** Throws AccessDeniedException unless the caller may perform the operation on the key with this context. */
type Authorize = (call: { principal: Principal; operation: OperationName }, keyId: string, encryptionContext: Readonly<Record<string, string>>) => void;

const DATA_FILE = 'kms-keys.json';
const KEY_ID_LENGTH = 36; // a UUID, like real KMS key ids
const BLOB_VERSION = 1;
const IV_LENGTH = 12;
const TAG_LENGTH = 16;
const HEADER_LENGTH = 1 + KEY_ID_LENGTH;
const ALIAS_PATTERN = /^alias\/[a-zA-Z0-9/_-]+$/;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

// Real KMS knows these; the stand-in only implements a subset, and telling the
// two apart keeps "valid but unsupported here" distinct from "invalid input".
const KNOWN_ENCRYPTION_ALGORITHMS = new Set(['SYMMETRIC_DEFAULT', 'RSAES_OAEP_SHA_1', 'RSAES_OAEP_SHA_256', 'SM2PKE']);
const KNOWN_MAC_ALGORITHMS = new Set(['HMAC_SHA_224', 'HMAC_SHA_256', 'HMAC_SHA_384', 'HMAC_SHA_512']);


function validationError(message: string): AwsServiceError {
  return new AwsServiceError('ValidationException', `1 validation error detected: ${message}`);
}

// ---------------------------------------------------------------------------
// Request field parsing. The SDK validates little on the client side, so the
// stand-in has to reject what real KMS would, or callers' bugs go unnoticed.

function optString(body: Body, name: string, maxLength = 2048): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw validationError(`Value at '${name}' must be a string`);
  if (value.length < 1 || value.length > maxLength) {
    throw validationError(`Value at '${name}' failed to satisfy constraint: Member must have length between 1 and ${maxLength}`);
  }
  return value;
}

function reqString(body: Body, name: string, maxLength?: number): string {
  const value = optString(body, name, maxLength);
  if (value === undefined) throw validationError(`Value null at '${name}' failed to satisfy constraint: Member must not be null`);
  return value;
}

function optBlob(body: Body, name: string, maxBytes: number): Buffer | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !BASE64_PATTERN.test(value)) {
    throw new AwsServiceError('SerializationException', `Value at '${name}' is not a valid base64 blob`);
  }
  const bytes = Buffer.from(value, 'base64');
  if (bytes.length < 1 || bytes.length > maxBytes) {
    throw validationError(`Value at '${name}' failed to satisfy constraint: Member must have length between 1 and ${maxBytes}`);
  }
  return bytes;
}

function reqBlob(body: Body, name: string, maxBytes: number): Buffer {
  const value = optBlob(body, name, maxBytes);
  if (value === undefined) throw validationError(`Value null at '${name}' failed to satisfy constraint: Member must not be null`);
  return value;
}

function optInt(body: Body, name: string, min: number, max: number): number | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw validationError(`Value '${String(value)}' at '${name}' failed to satisfy constraint: Member must be an integer between ${min} and ${max}`);
  }
  return value;
}

function encryptionContext(body: Body, name: string): Record<string, string> {
  const value = body[name];
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw validationError(`Value at '${name}' must be a map of strings`);
  const context: Record<string, string> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry !== 'string') throw validationError(`Value at '${name}.${key}' must be a string`);
    context[key] = entry;
  }
  return context;
}

/**
 * Sorting makes the bound context independent of JSON member order, as in real
 * KMS; encoding as JSON pairs keeps it unambiguous whatever the keys contain.
 */
function canonicalContext(context: Record<string, string>): Buffer {
  const pairs = Object.keys(context)
    .sort()
    .map((key) => [key, context[key]]);
  return Buffer.from(JSON.stringify(pairs), 'utf8');
}

function checkEncryptionAlgorithm(body: Body, name: string): void {
  const algorithm = optString(body, name);
  if (algorithm === undefined || algorithm === 'SYMMETRIC_DEFAULT') return;
  if (KNOWN_ENCRYPTION_ALGORITHMS.has(algorithm)) {
    throw new AwsServiceError('InvalidKeyUsageException', `The encryption algorithm ${algorithm} is not valid for a SYMMETRIC_DEFAULT key.`);
  }
  throw validationError(`Value '${algorithm}' at '${name}' failed to satisfy constraint: Member must satisfy enum value set`);
}

// ---------------------------------------------------------------------------
// Key store

class KeyStore {
  readonly keys = new Map<string, StoredKey>();
  readonly aliases = new Map<string, string>();
  constructor(
    readonly region: string,
    readonly accountId: string,
    private readonly dataFile: StandinDataFile,
  ) {}

  keyArn(keyId: string): string {
    return `arn:aws:kms:${this.region}:${this.accountId}:key/${keyId}`;
  }

  aliasArn(alias: string): string {
    return `arn:aws:kms:${this.region}:${this.accountId}:${alias}`;
  }

  async load(): Promise<void> {
    const stored = await this.dataFile.read();
    if (stored === undefined) return;
    // A damaged file must stop the start-up: silently starting empty would
    // orphan every ciphertext made with the lost keys.
    const data = stored as PersistedData;
    if (data?.version !== 1 || !Array.isArray(data.keys) || typeof data.aliases !== 'object' || data.aliases === null) {
      throw new Error(`${this.dataFile.path} is not a KMS stand-in data file`);
    }
    for (const key of data.keys) {
      if (typeof key.keyId !== 'string' || !UUID_PATTERN.test(key.keyId) || typeof key.material !== 'string') {
        throw new Error(`${this.dataFile.path} holds an invalid key entry`);
      }
      if (key.keySpec !== 'SYMMETRIC_DEFAULT' && key.keySpec !== 'HMAC_256') {
        throw new Error(`${this.dataFile.path} holds a key with unsupported spec ${String(key.keySpec)}`);
      }
      this.keys.set(key.keyId, {
        keyId: key.keyId,
        keySpec: key.keySpec,
        keyUsage: key.keySpec === 'HMAC_256' ? 'GENERATE_VERIFY_MAC' : 'ENCRYPT_DECRYPT',
        description: typeof key.description === 'string' ? key.description : '',
        creationDate: typeof key.creationDate === 'number' ? key.creationDate : 0,
        material: Buffer.from(key.material, 'base64'),
      });
    }
    for (const [alias, keyId] of Object.entries(data.aliases)) {
      if (typeof keyId !== 'string' || !this.keys.has(keyId)) throw new Error(`${this.dataFile.path}: alias ${alias} points to an unknown key`);
      this.aliases.set(alias, keyId);
    }
  }

  persist(): Promise<void> {
    const data: PersistedData = {
      version: 1,
      keys: [...this.keys.values()].map((key) => ({ ...key, material: key.material.toString('base64') })),
      aliases: Object.fromEntries(this.aliases),
    };
    return this.dataFile.write(data);
  }

  flushed(): Promise<void> {
    return this.dataFile.flushed();
  }

  createKey(keySpec: KmsStandinKeySpec, description: string): StoredKey {
    const key: StoredKey = {
      keyId: randomUUID(),
      keySpec,
      keyUsage: keySpec === 'HMAC_256' ? 'GENERATE_VERIFY_MAC' : 'ENCRYPT_DECRYPT',
      description,
      creationDate: Math.floor(Date.now() / 1000),
      material: randomBytes(32),
    };
    this.keys.set(key.keyId, key);
    return key;
  }

  /** Accepts the four forms real KMS accepts: key id, key ARN, alias name and alias ARN. */
  resolve(identifier: string): StoredKey {
    let resource = identifier;
    if (identifier.startsWith('arn:')) {
      const match = /^arn:[a-z-]+:kms:([^:]*):([^:]*):(.+)$/.exec(identifier);
      if (!match || match[1] !== this.region || match[2] !== this.accountId) throw this.notFound(identifier);
      resource = match[3] ?? '';
      if (resource.startsWith('key/')) resource = resource.slice('key/'.length);
      else if (!resource.startsWith('alias/')) throw this.notFound(identifier);
    }
    const keyId = resource.startsWith('alias/') ? this.aliases.get(resource) : resource;
    const key = keyId === undefined ? undefined : this.keys.get(keyId);
    if (!key) throw this.notFound(identifier);
    return key;
  }

  private notFound(identifier: string): AwsServiceError {
    if (identifier.startsWith('alias/')) return new AwsServiceError('NotFoundException', `Alias ${this.aliasArn(identifier)} is not found.`);
    if (identifier.startsWith('arn:') && identifier.includes(':alias/')) {
      return new AwsServiceError('NotFoundException', `Alias ${identifier} is not found.`);
    }
    const arn = identifier.startsWith('arn:') ? identifier : this.keyArn(identifier);
    return new AwsServiceError('NotFoundException', `Key '${arn}' does not exist`);
  }
}

// ---------------------------------------------------------------------------
// Ciphertext blobs: version (1 byte) | key id (36 ASCII bytes) | IV | tag | ciphertext.
// The header is part of the additional authenticated data, so a blob cannot be
// re-labelled as belonging to another key without failing authentication.

function requireUsage(key: StoredKey, usage: KeyUsage, arn: string): void {
  if (key.keyUsage !== usage) {
    throw new AwsServiceError('InvalidKeyUsageException', `${arn} key usage is ${key.keyUsage} which is not valid for this operation.`);
  }
}

function seal(key: StoredKey, plaintext: Buffer, context: Record<string, string>): Buffer {
  const header = Buffer.concat([Buffer.from([BLOB_VERSION]), Buffer.from(key.keyId, 'ascii')]);
  const iv = randomBytes(IV_LENGTH);
  const cipher = createCipheriv('aes-256-gcm', key.material, iv);
  cipher.setAAD(Buffer.concat([header, canonicalContext(context)]));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([header, iv, cipher.getAuthTag(), ciphertext]);
}

function blobKeyId(blob: Buffer): string {
  const keyId = blob.subarray(1, HEADER_LENGTH).toString('ascii');
  if (blob.length <= HEADER_LENGTH + IV_LENGTH + TAG_LENGTH || blob[0] !== BLOB_VERSION || !UUID_PATTERN.test(keyId)) {
    throw new AwsServiceError('InvalidCiphertextException', 'The ciphertext is invalid.');
  }
  return keyId;
}

function open(store: KeyStore, blob: Buffer, context: Record<string, string>, expectedKeyId: string | undefined): { key: StoredKey; plaintext: Buffer } {
  const keyId = blobKeyId(blob);
  if (expectedKeyId !== undefined) {
    const expected = store.resolve(expectedKeyId);
    if (expected.keyId !== keyId) {
      throw new AwsServiceError('IncorrectKeyException', 'The key ID in the request does not identify a KMS key that can perform this operation.');
    }
  }
  const key = store.keys.get(keyId);
  if (!key || key.keyUsage !== 'ENCRYPT_DECRYPT') throw new AwsServiceError('InvalidCiphertextException', 'The ciphertext is invalid.');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.material, blob.subarray(HEADER_LENGTH, HEADER_LENGTH + IV_LENGTH));
    decipher.setAuthTag(blob.subarray(HEADER_LENGTH + IV_LENGTH, HEADER_LENGTH + IV_LENGTH + TAG_LENGTH));
    decipher.setAAD(Buffer.concat([blob.subarray(0, HEADER_LENGTH), canonicalContext(context)]));
    const plaintext = Buffer.concat([decipher.update(blob.subarray(HEADER_LENGTH + IV_LENGTH + TAG_LENGTH)), decipher.final()]);
    return { key, plaintext };
  } catch {
    // Real KMS does not say whether the context or the bytes were wrong, and
    // neither should the stand-in, so callers cannot come to depend on it.
    throw new AwsServiceError('InvalidCiphertextException', 'The ciphertext is invalid.');
  }
}

function macAlgorithm(body: Body): 'HMAC_SHA_256' {
  const algorithm = reqString(body, 'MacAlgorithm');
  if (algorithm === 'HMAC_SHA_256') return algorithm;
  if (KNOWN_MAC_ALGORITHMS.has(algorithm)) {
    throw new AwsServiceError('InvalidKeyUsageException', `The MAC algorithm ${algorithm} is not valid for an HMAC_256 key.`);
  }
  throw validationError(`Value '${algorithm}' at 'macAlgorithm' failed to satisfy constraint: Member must satisfy enum value set`);
}

function dataKeyLength(body: Body): number {
  const numberOfBytes = optInt(body, 'NumberOfBytes', 1, 1024);
  const keySpec = optString(body, 'KeySpec');
  if ((numberOfBytes === undefined) === (keySpec === undefined)) {
    throw new AwsServiceError('ValidationException', 'Please specify either number of bytes or key spec.');
  }
  if (numberOfBytes !== undefined) return numberOfBytes;
  if (keySpec === 'AES_256') return 32;
  if (keySpec === 'AES_128') return 16;
  throw validationError(`Value '${String(keySpec)}' at 'keySpec' failed to satisfy constraint: Member must satisfy enum value set: [AES_256, AES_128]`);
}

function operations(store: KeyStore, authorize: Authorize): Map<OperationName, AwsJsonOperation<OperationName>> {
  const b64 = (bytes: Buffer): string => bytes.toString('base64');

  return new Map<OperationName, AwsJsonOperation<OperationName>>([
    [
      'Decrypt',
      (body, call) => {
        const blob = reqBlob(body, 'CiphertextBlob', 6144);
        checkEncryptionAlgorithm(body, 'EncryptionAlgorithm');
        const context = encryptionContext(body, 'EncryptionContext');
        // The key is the one the ciphertext names (a blob that names none is refused as KMS refuses it, before any policy).
        authorize(call, blobKeyId(blob), context);
        const { key, plaintext } = open(store, blob, context, optString(body, 'KeyId'));
        return { KeyId: store.keyArn(key.keyId), Plaintext: b64(plaintext), EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' };
      },
    ],
    [
      'GenerateDataKey',
      (body, call) => {
        const key = store.resolve(reqString(body, 'KeyId'));
        const arn = store.keyArn(key.keyId);
        const context = encryptionContext(body, 'EncryptionContext');
        authorize(call, key.keyId, context);
        requireUsage(key, 'ENCRYPT_DECRYPT', arn);
        const plaintext = randomBytes(dataKeyLength(body));
        return { CiphertextBlob: b64(seal(key, plaintext, context)), Plaintext: b64(plaintext), KeyId: arn };
      },
    ],
    [
      'GenerateMac',
      (body, call) => {
        const key = store.resolve(reqString(body, 'KeyId'));
        const arn = store.keyArn(key.keyId);
        authorize(call, key.keyId, {});
        requireUsage(key, 'GENERATE_VERIFY_MAC', arn);
        const message = reqBlob(body, 'Message', 4096);
        const algorithm = macAlgorithm(body);
        const mac = createHmac('sha256', key.material).update(message).digest();
        return { Mac: b64(mac), MacAlgorithm: algorithm, KeyId: arn };
      },
    ],
  ]);
}

// ---------------------------------------------------------------------------
// HTTP

/** GET here answers the per-operation call counter as JSON (the stand-in's own extension, never KMS's). */
export const CALLS_PATH = '/__standin/calls';

export async function startKmsStandin(options: KmsStandinOptions): Promise<KmsStandin> {
  const store = new KeyStore('us-east-1', LOCAL_ACCOUNT_ID, new StandinDataFile(options.dataDir ? join(options.dataDir, DATA_FILE) : undefined));
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  await store.load();
  await createKeys(store, options.keys, options.dataDir);

  // IAM's part, as the DynamoDB and S3 gates play it: the operator may do anything, a function what its key grants allow.
  const authorize: Authorize = (call, keyId, context) => {
    const grants = grantsOf(call.principal, options.functions);
    const granted = [...store.aliases].find(([alias, id]) => id === keyId && options.resources[alias] !== undefined)?.[0];
    if (!grants || keyGrantsAllow(grants, { action: call.operation, key: granted === undefined ? undefined : options.resources[granted], encryptionContext: context })) return;
    const keyArn = store.keyArn(keyId);
    logRefusal(options.log, 'kms', call.principal, { action: call.operation, key: keyArn, encryption_context: context });
    throw new AwsServiceError('AccessDeniedException', notAuthorized(call.principal, `kms:${call.operation}`, keyArn));
  };
  const calls: Record<string, number> = {};
  const counted = [...operations(store, authorize)].map(([name, operation]): [OperationName, AwsJsonOperation<OperationName>] => [
    name,
    (body, call) => {
      calls[name] = (calls[name] ?? 0) + 1;
      return operation(body, call);
    },
  ]);

  const server = await startAwsJsonStandin({
    name: 'KMS',
    port: options.port,
    service: { signingName: 'kms', targetPrefix: 'TrentService', unknownOperation: 'UnsupportedOperationException', internalError: { type: 'KMSInternalException', message: 'Internal error in the local KMS stand-in.' } },
    verifier: options.verifier,
    log: options.log,
    operations: new Map(counted),
    extension: (req, res) => answerCalls(req, res, calls),
    closed: () => store.flushed(),
  });

  const keys: Record<string, { keyId: string; arn: string }> = {};
  for (const [alias, keyId] of store.aliases) keys[alias] = { keyId, arn: store.keyArn(keyId) };

  return {
    url: server.url,
    keys,
    calls,
    resetCalls() {
      for (const name of Object.keys(calls)) delete calls[name];
    },
    close: server.close,
  };
}

/** The keys asked for that the data dir does not hold yet, made and persisted. */
async function createKeys(store: KeyStore, keys: KmsStandinOptions['keys'], dataDir: string | undefined): Promise<void> {
  let created = false;
  for (const { alias, keySpec } of keys) {
    if (!ALIAS_PATTERN.test(alias)) throw new Error(`Invalid KMS alias ${alias}: it must look like alias/name`);
    if (keySpec !== 'SYMMETRIC_DEFAULT' && keySpec !== 'HMAC_256') throw new Error(`Unsupported key spec ${String(keySpec)} for ${alias}`);
    const existing = store.aliases.get(alias);
    if (existing !== undefined) {
      const key = store.keys.get(existing);
      // Reusing a persisted key of the wrong kind would only fail later, at first use.
      if (key?.keySpec !== keySpec) throw new Error(`${alias} exists in ${dataDir} with key spec ${String(key?.keySpec)}, not ${keySpec}`);
      continue;
    }
    const key = store.createKey(keySpec, `local ${alias}`);
    store.aliases.set(alias, key.keyId);
    created = true;
  }
  if (created) await store.persist();
}

/** Not a KMS operation: how many calls of each operation the stand-in served, for tests and benchmarks that count them. */
function answerCalls(req: IncomingMessage, res: ServerResponse, calls: Record<string, number>): boolean {
  if (req.method !== 'GET' || req.url !== CALLS_PATH) return false;
  const body = JSON.stringify(calls);
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }).end(body);
  return true;
}
