import { randomBytes, timingSafeEqual } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import type http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { KmsSecretHasher } from '#shared/aws/credential-hasher.ts';
import type { FunctionContainer } from '#shared/runtime/container.ts';
import { functionContainer, runInContainer } from '#shared/runtime/container.ts';
import { eventRuleTriggers, s3Triggers, streamTriggers } from '#shared/platform/triggers.ts';
import type { EventRuleTrigger, S3Trigger } from '#shared/platform/triggers.ts';
import { bucketGrants } from '#shared/platform/bucket-grants.ts';
import { dynamodbGrants } from '#shared/platform/dynamodb-grants.ts';
import type { FunctionAccess, FunctionResources } from '#shared/platform/function-environment.ts';
import type { GrantedKey } from '#shared/platform/key-grants.ts';
import { keyGrants } from '#shared/platform/key-grants.ts';
import { accessFor, AUTHORIZER_ACCESS, BACKGROUND_FUNCTION_ACCESS, functionEnvironment } from '#shared/platform/function-environment.ts';
import { routes as routeTable } from '#shared/platform/routes.ts';
import type { RouteDefinition } from '#shared/platform/routes.ts';
import { AU_HISTORY_TABLE_KEY, WEBHOOK_TABLE_KEY } from '#shared/platform/table.ts';
import { DynamoCredentialStore } from '#shared/store/credentials.ts';
import { DynamoOrganizationStore } from '#shared/store/organizations.ts';
import type { IssuedCredential } from '#shared/domain/credentials.ts';
import { issueCredential } from '#shared/domain/credentials.ts';
import { AUTHORIZER_CACHE_TTL_SECONDS } from '#shared/platform/names.ts';
import { registerOrganization } from '#shared/domain/tenancy.ts';
import type { PublishableKey } from '#shared/domain/publishable-keys.ts';
import { issuePublishableKey } from '#shared/domain/publishable-keys.ts';
import { DynamoPublishableKeyStore } from '#shared/store/publishable-keys.ts';
import { assetOf } from '#shared/tokenization/script.ts';
import { writeTokenizeScript } from '../client/build.ts';
import { startApiGatewayEmulator } from './api-gateway.ts';
import type { ApiGatewayEmulatorOptions } from './api-gateway.ts';
import { onExitSync } from './cleanup.ts';
import { demoRoutes } from './demo/server.ts';
import { startDynamoGate } from './dynamodb-gate.ts';
import { startDynamoDbLocal } from './dynamodb-local.ts';
import { startStreamPoller } from './dynamodb-streams.ts';
import { startEventBridgeStandin } from './eventbridge-standin.ts';
import type { EventBridgeStandin } from './eventbridge-standin.ts';
import { startKmsStandin } from './kms-standin.ts';
import type { KmsStandinKeySpec } from './kms-standin.ts';
import { startPaypalStandin } from './paypal-standin.ts';
import { startSecretsManagerStandin } from './secrets-manager-standin.ts';
import { startSqsStandin } from './sqs-standin.ts';
import { startQueuePollers } from './queue-pollers.ts';
import { WEBHOOK_QUEUES, WEBHOOK_QUEUE_TRIGGERS, matchesWebhookRule, webhookIntakeGroup } from '#shared/platform/webhooks.ts';
import type { WebhookQueue } from '#shared/platform/webhooks.ts';
import { assertPortFree, localPorts } from './ports.ts';
import type { LocalPorts } from './ports.ts';
import { ADMIN_FLUSH_PATH, eventsFilePath } from './runtime-file.ts';
import { ensurePlainTable, ensureTable } from './provision.ts';
import { routeS3Events } from './s3-events.ts';
import { startMalwareScanner } from './malware-scanner.ts';
import { startS3Gate } from './s3-gate.ts';
import { startS3Local } from './s3-local.ts';
import { generateSigningCredentials } from './signing-credentials.ts';
import type { SigningCredential } from './signing-credentials.ts';
import { signatureVerifier } from './sigv4.ts';
import type { Seed } from './seed.ts';
import { applySeed } from './seed.ts';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const LOCAL_NAMES = {
  stage: 'local',
  environmentName: 'local',
  tableName: 'payments-local',
  auHistoryTableName: 'payments-local-au-history',
  webhookTableName: 'payments-local-webhooks',
  documentsBucket: 'payments-documents-local',
  reportsBucket: 'payments-reports-local',
  vaultKeyAlias: 'alias/payments-vault',
  credentialMacKeyAlias: 'alias/payments-credential-mac',
  fingerprintKeyAlias: 'alias/payments-fingerprint',
  requestHashKeyAlias: 'alias/payments-request-hash',
  eventBusName: 'payments-events-local',
  // The stack's secret is named by CloudFormation after this construct id (infra/stack.ts).
  paypalSecretName: 'PaypalCredentials',
  demoOrganizationId: 'org_demo',
  demoLocationId: 'loc_demo',
} as const;

/**
 * What the runtime stores in its PayPal secret when the secret does not exist
 * yet: the pair the PayPal stand-in is sent (it accepts any). A pair stored
 * since (`admin set-paypal-credentials`) persists with LOCAL_DATA_DIR and is kept.
 */
export const LOCAL_PAYPAL_CREDENTIALS = { client_id: 'local-paypal-client', client_secret: 'local-paypal-secret' } as const;

export interface LocalRuntimeOptions {
  /** The API's port; the emulators take the next four (see local/ports.ts). 0: all random. */
  port: number;
  /** Persist DynamoDB, S3 objects, KMS key material and secrets here; in memory when absent. */
  dataDir?: string;
  seed?: Seed;
  routes?: readonly RouteDefinition[];
  s3Triggers?: readonly S3Trigger[];
  /** The functions EventBridge rules invoke (the malware scan's result); [] runs no local scanner. */
  eventRuleTriggers?: readonly EventRuleTrigger[];
  functionsDir?: string;
  log?: (line: Record<string, unknown>) => void;
  /**
   * The longest webhook retry step after the first (seconds): the schedule's
   * later steps (minutes to 12 hours) are shortened locally, by the delivery
   * function's environment; the first retry keeps its 5-15 s. Default 5.
   */
  webhookLaterRetryCapSeconds?: number;
}

export interface LocalRuntime {
  url: string;
  port: number;
  /**
   * Every variable any handler gets (each handler gets only its own function's,
   * see functionContainers), with the operator's signing credential instead of
   * any function's: CLIs apply it to reach the same stores through the same
   * checking endpoints. Secret: it goes only to the 0600 runtime file.
   */
  handlerEnvironment: Record<string, string>;
  /** Credentials issued at start: the LOCAL_SEED ones, or one demo credential. */
  issuedCredentials: IssuedCredential[];
  endpoints: { dynamodb: string; s3: string; kms: string; paypal: string; secretsManager: string; eventbridge: string; sqs: string };
  /**
   * Where domain events are appended, one EventBridge-shaped JSON object per line:
   * `.local/events-<port>.jsonl`, owner-only (0600), removed at close unless the data persists (dataDir).
   */
  eventsFile: string;
  /** The demo checkout (only without a seed): its page and the publishable key it uses. */
  demo: { url: string; publishableKey: PublishableKey } | undefined;
  /** The KMS stand-in's live per-operation call counter (benchmarks count KMS calls per request). */
  kmsCalls: { calls: Record<string, number>; reset(): void };
  /**
   * Bearer token of the runtime's loopback admin endpoint (`POST ${ADMIN_FLUSH_PATH}`),
   * written only to the owner-readable runtime file; `admin revoke-*` uses it.
   */
  adminToken: string;
  close(): Promise<void>;
}

/**
 * Starts everything `npm start` serves, in named steps: the stores' emulators
 * (DynamoDB Local, s3rver), the checked endpoints every caller reaches them
 * and the other services through (the DynamoDB and S3 gates; the KMS, Secrets
 * Manager and EventBridge stand-ins; the PayPal stand-in), the functions'
 * environments, the tables and seed, the API Gateway emulator running the
 * real handlers, the events file, and the S3 triggers.
 * A failure part-way closes whatever had started.
 */
export async function startLocalRuntime(options: LocalRuntimeOptions): Promise<LocalRuntime> {
  const closers: Closers = [];
  const close = () => closeInReverse(closers);
  try {
    const ports = await claimPorts(options.port);
    const hosted = hostedFunctions(options);
    const stores = await startStores(options.dataDir, closers);
    const endpoints = await startEndpoints({ ports, dataDir: options.dataDir, stores, hosted }, closers);
    const environments = functionEnvironments(hosted, endpoints, options);
    const provisioned = await provision({ options, hosted, stores, endpoints, invokeAs: environments.invokeAs }, closers);
    const api = await startApi({ options, hosted, ports, invokeAs: environments.invokeAs }, closers);
    const eventsFile = await writeEventsFile({ dataDir: options.dataDir, port: api.port, eventBridge: endpoints.eventBridge }, closers);
    await startTriggers({ options, hosted, stores, invokeAs: environments.invokeAs }, closers);
    const pollers = startQueuePollers({
      triggers: WEBHOOK_QUEUE_TRIGGERS,
      queueOf: (trigger) => ({ queue: endpoints.sqs.queue(trigger.queue), arn: `arn:aws:sqs:us-east-1:000000000000:${localQueueName(WEBHOOK_QUEUES[trigger.queue].name)}` }),
      functionsDir: hosted.functionsDir,
      invokeAs: environments.invokeAs,
      log: options.log,
    });
    closers.push(pollers.close);
    const demo = options.seed ? undefined : await startDemo(api, provisioned);
    return {
      url: api.url,
      port: api.port,
      handlerEnvironment: environments.handlerEnvironment,
      issuedCredentials: provisioned.issuedCredentials,
      demo,
      endpoints: {
        dynamodb: endpoints.dynamoGate.url,
        s3: endpoints.s3Gate.url,
        kms: endpoints.kms.url,
        paypal: endpoints.paypal.url,
        secretsManager: endpoints.secretsManager.url,
        eventbridge: endpoints.eventBridge.url,
        sqs: endpoints.sqs.url,
      },
      eventsFile,
      kmsCalls: { calls: endpoints.kms.calls, reset: () => endpoints.kms.resetCalls() },
      adminToken: api.adminToken,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** What stops each part started so far, run last-started first. */
type Closers = Array<() => Promise<void>>;

async function closeInReverse(closers: Closers): Promise<void> {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
}

type InvokeAs = <R>(functionName: string, invoke: () => Promise<R>) => Promise<R>;

/** The ports the runtime answers on, checked free before anything starts, so a taken PORT fails at once rather than after DynamoDB Local's start-up. */
async function claimPorts(port: number): Promise<LocalPorts> {
  const ports = localPorts(port);
  await assertPortFree(ports.api, 'the API (PORT)');
  // S3's address is what presigned uploads and downloads name: the functions' gate takes PORT+2, s3rver behind it a free port.
  await assertPortFree(ports.s3, 'S3 (PORT+2)');
  await assertPortFree(ports.dynamodb, 'DynamoDB (PORT+1)');
  return ports;
}

/** Every function the runtime hosts, with what it may touch, and the credentials each signs with. */
function hostedFunctions(options: LocalRuntimeOptions) {
  const routes = options.routes ?? routeTable;
  const triggers = options.s3Triggers ?? s3Triggers;
  const ruleTriggers = options.eventRuleTriggers ?? eventRuleTriggers;
  const accesses = functionAccesses(routes, [...triggers, ...ruleTriggers]);
  // IAM's part, locally: each function signs with a credential of its own, made now, and its grants (the same data CDK's policies come from)
  // say what it may do; the operator (this runtime, the CLIs) signs with another. Every endpoint that holds data checks the signatures.
  const signing = generateSigningCredentials(accesses.map(([name]) => name));
  return {
    routes,
    triggers,
    ruleTriggers,
    accesses,
    signing,
    verifier: signatureVerifier(signing),
    functionsDir: options.functionsDir ?? path.join(REPO_ROOT, 'functions'),
    // A refusal is an error whatever the access log's setting: it would fail in AWS.
    logRefusal: options.log ?? ((line: Record<string, unknown>) => process.stderr.write(`${JSON.stringify(line)}\n`)),
  };
}
type HostedFunctions = ReturnType<typeof hostedFunctions>;

/** The stores' emulators, each behind a gate (startEndpoints), so on free ports of their own. */
async function startStores(dataDir: string | undefined, closers: Closers) {
  const dataPath = (name: string) => (dataDir ? path.join(dataDir, name) : undefined);
  if (dataDir) for (const name of ['dynamodb', 's3']) await mkdir(path.join(dataDir, name), { recursive: true });
  const [dynamodbLocal, s3Local] = await Promise.all([
    startDynamoDbLocal({ dataDir: dataPath('dynamodb'), port: 0 }),
    startS3Local({ dataDir: dataPath('s3'), buckets: [LOCAL_NAMES.documentsBucket, LOCAL_NAMES.reportsBucket] }),
  ]);
  closers.push(dynamodbLocal.close, s3Local.close);
  return { dynamodbLocal, s3Local };
}
type Stores = Awaited<ReturnType<typeof startStores>>;

/** The runtime's KMS keys, and which granted key each is (shared/platform/key-grants.ts). */
const LOCAL_KEYS = [
  { alias: LOCAL_NAMES.vaultKeyAlias, keySpec: 'SYMMETRIC_DEFAULT', granted: 'vault' },
  { alias: LOCAL_NAMES.credentialMacKeyAlias, keySpec: 'HMAC_256', granted: 'credentialMac' },
  { alias: LOCAL_NAMES.fingerprintKeyAlias, keySpec: 'HMAC_256', granted: 'fingerprint' },
  { alias: LOCAL_NAMES.requestHashKeyAlias, keySpec: 'HMAC_256', granted: 'requestHash' },
] as const satisfies ReadonlyArray<{ alias: string; keySpec: KmsStandinKeySpec; granted: GrantedKey }>;

/**
 * Every endpoint a caller reaches, each checking signatures and, where the
 * stack's policies hold data, the caller's grants: the gates in front of the
 * stores, the KMS, Secrets Manager and EventBridge stand-ins, and PayPal's.
 */
async function startEndpoints(parts: { ports: LocalPorts; dataDir: string | undefined; stores: Stores; hosted: HostedFunctions }, closers: Closers) {
  const { ports, stores, hosted } = parts;
  const checks = { verifier: hosted.verifier, log: hosted.logRefusal };
  const grantsOfEach = <Grant>(grants: (access: FunctionAccess) => Grant[]) => new Map(hosted.accesses.map(([name, access]) => [name, grants(access)]));
  const [dynamoGate, s3Gate, kms, secretsManager, eventBridge, paypal] = await Promise.all([
    startDynamoGate({
      ...checks,
      port: ports.dynamodb,
      target: stores.dynamodbLocal.endpoint,
      resources: { [LOCAL_NAMES.tableName]: 'table', [LOCAL_NAMES.auHistoryTableName]: 'auHistory', [LOCAL_NAMES.webhookTableName]: 'webhooks' },
      functions: grantsOfEach(dynamodbGrants),
    }),
    startS3Gate({
      ...checks,
      port: ports.s3,
      target: stores.s3Local.endpoint,
      resources: { [LOCAL_NAMES.documentsBucket]: 'documents', [LOCAL_NAMES.reportsBucket]: 'reports' },
      functions: grantsOfEach(bucketGrants),
    }),
    startKmsStandin({
      ...checks,
      port: ports.kms,
      dataDir: parts.dataDir,
      keys: LOCAL_KEYS,
      resources: Object.fromEntries(LOCAL_KEYS.map(({ alias, granted }) => [alias, granted])),
      functions: grantsOfEach(keyGrants),
    }),
    // The stack's PayPal secret, created only when absent (see LOCAL_PAYPAL_CREDENTIALS).
    startSecretsManagerStandin({ ...checks, dataDir: parts.dataDir, secrets: [{ name: LOCAL_NAMES.paypalSecretName, secretString: JSON.stringify(LOCAL_PAYPAL_CREDENTIALS) }] }),
    startEventBridgeStandin({ ...checks, busNames: [LOCAL_NAMES.eventBusName], route: (event) => routeToWebhooks(event) }),
    startPaypalStandin({ port: ports.paypal }),
  ]);
  closers.push(dynamoGate.close, s3Gate.close, kms.close, secretsManager.close, eventBridge.close, paypal.close);
  const sqs = await startSqsStandin({
    ...checks,
    queues: (Object.entries(WEBHOOK_QUEUES) as Array<[WebhookQueue, (typeof WEBHOOK_QUEUES)[WebhookQueue]]>).map(([granted, spec]) => ({ ...spec, name: localQueueName(spec.name), granted })),
    functions: grantsOfEach((access) => [...(access.queues ?? [])]),
  });
  closers.push(sqs.close);
  // The webhook rule (shared/platform/webhooks.ts) and its target, as EventBridge applies them: the whole event is the
  // message, grouped by organization.
  const intake = sqs.queue('intake');
  const routeToWebhooks = (event: Record<string, unknown>) => {
    if (matchesWebhookRule(event)) intake.send(JSON.stringify(event), webhookIntakeGroup(event));
  };
  const keyArn = (alias: string) => kms.keys[alias]?.arn ?? missing(`the KMS key ${alias}`);
  const keyArns = { vault: keyArn(LOCAL_NAMES.vaultKeyAlias), credentialMac: keyArn(LOCAL_NAMES.credentialMacKeyAlias), fingerprint: keyArn(LOCAL_NAMES.fingerprintKeyAlias), requestHash: keyArn(LOCAL_NAMES.requestHashKeyAlias) };
  const paypalSecretArn = secretsManager.secrets[LOCAL_NAMES.paypalSecretName]?.arn ?? missing('the PayPal secret');
  return { dynamoGate, s3Gate, kms, secretsManager, eventBridge, paypal, sqs, keyArns, paypalSecretArn };
}
type Endpoints = Awaited<ReturnType<typeof startEndpoints>>;

function missing(what: string): never {
  throw new Error(`the local runtime did not create ${what}`);
}

/**
 * What each function's container holds (functionContainers), what the CLIs
 * get (handlerEnvironment), and this process's own environment.
 */
const localQueueName = (name: string) => `payments-local-${name}`;

function functionEnvironments(hosted: HostedFunctions, endpoints: Endpoints, options: LocalRuntimeOptions) {
  // What Lambda and CDK give every function; the rest each function gets from its declared access.
  const platformEnvironment: Record<string, string> = {
    AWS_REGION: 'us-east-1',
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamoGate.url,
    AWS_ENDPOINT_URL_S3: endpoints.s3Gate.url,
    AWS_ENDPOINT_URL_KMS: endpoints.kms.url,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: endpoints.secretsManager.url,
    AWS_ENDPOINT_URL_EVENTBRIDGE: endpoints.eventBridge.url,
    AWS_ENDPOINT_URL_SQS: endpoints.sqs.url,
    S3_FORCE_PATH_STYLE: 'true',
    ENVIRONMENT_NAME: LOCAL_NAMES.environmentName,
    POWERTOOLS_SERVICE_NAME: 'payments-api',
    // No X-Ray daemon and no CloudWatch agent here: the same handler code, with tracing and EMF metrics off.
    POWERTOOLS_TRACE_ENABLED: 'false',
    POWERTOOLS_METRICS_DISABLED: 'true',
  };
  const { keyArns } = endpoints;
  const resources: FunctionResources = {
    tableName: LOCAL_NAMES.tableName,
    auHistoryTableName: LOCAL_NAMES.auHistoryTableName,
    webhookTableName: LOCAL_NAMES.webhookTableName,
    vaultKeyId: keyArns.vault,
    documentsBucket: LOCAL_NAMES.documentsBucket,
    // As in AWS, documents are written naming SSE-KMS under the vault key (s3rver accepts and ignores the headers).
    documentsKmsKeyId: keyArns.vault,
    credentialMacKeyId: keyArns.credentialMac,
    fingerprintKeyId: keyArns.fingerprint,
    requestHashKeyId: keyArns.requestHash,
    reportsBucket: LOCAL_NAMES.reportsBucket,
    eventBusName: LOCAL_NAMES.eventBusName,
    // As in AWS, PayPal functions read their client credentials from the secret, once per container.
    paypal: { apiUrl: endpoints.paypal.url, credentials: { secretArn: endpoints.paypalSecretArn } },
    webhookDeliveryQueueUrl: endpoints.sqs.queueUrl(localQueueName(WEBHOOK_QUEUES.delivery.name)),
    webhookLocal: { allowLoopback: true, laterRetryCapSeconds: options.webhookLaterRetryCapSeconds ?? 5 },
  };
  const { signing } = hosted;
  const containers = functionContainers({ accesses: hosted.accesses, platformEnvironment, resources, credentialOf: (name) => signing.forFunction(name) });
  const invokeAs: InvokeAs = (functionName, invoke) => {
    const container = containers.get(functionName);
    if (!container) throw new Error(`no function named ${functionName}`);
    return runInContainer(container, invoke);
  };
  // Handlers run in this process, each inside its own function's container (see functionContainers);
  // the process itself holds what every function gets, and signs as the operator: what runs outside any
  // function (the Account Updater engine's reading of a file, as Step Functions reads it) is the runtime's own.
  delete process.env.AWS_PROFILE;
  delete process.env.AWS_SESSION_TOKEN;
  Object.assign(process.env, platformEnvironment, credentialEnvironment(signing.operator));
  return {
    invokeAs,
    handlerEnvironment: {
      ...platformEnvironment,
      ...Object.assign({}, ...[...containers.values()].map((container) => container.environment)),
      // CLIs act as the operator, not as one function.
      ...credentialEnvironment(signing.operator),
    } as Record<string, string>,
  };
}

/** The tables (and the stream poller on the main one's stream), then the seed: LOCAL_SEED's, or the demo organization. */
async function provision(parts: { options: LocalRuntimeOptions; hosted: HostedFunctions; stores: Stores; endpoints: Endpoints; invokeAs: InvokeAs }, closers: Closers) {
  const { options, hosted, endpoints } = parts;
  const clientConfig = { region: 'us-east-1', credentials: hosted.signing.operator };
  const dynamodbClient = new DynamoDBClient({ ...clientConfig, endpoint: endpoints.dynamoGate.url });
  const kmsClient = new KMSClient({ ...clientConfig, endpoint: endpoints.kms.url });
  closers.push(async () => {
    dynamodbClient.destroy();
    kmsClient.destroy();
  });
  const [{ streamArn }] = await Promise.all([
    ensureTable(dynamodbClient, LOCAL_NAMES.tableName),
    ensurePlainTable(dynamodbClient, LOCAL_NAMES.auHistoryTableName, AU_HISTORY_TABLE_KEY),
    ensurePlainTable(dynamodbClient, LOCAL_NAMES.webhookTableName, WEBHOOK_TABLE_KEY),
  ]);
  // Positions are taken before the API listens, so every change it commits reaches the publisher.
  const streams = await startStreamPoller({ endpoint: parts.stores.dynamodbLocal.endpoint, streamArn, triggers: streamTriggers, functionsDir: hosted.functionsDir, invokeAs: parts.invokeAs, log: options.log });
  closers.push(streams.close);

  const documentClient = DynamoDBDocumentClient.from(dynamodbClient, { marshallOptions: { removeUndefinedValues: true } });
  const deps = {
    organizations: new DynamoOrganizationStore(documentClient, LOCAL_NAMES.tableName),
    credentials: new DynamoCredentialStore(documentClient, LOCAL_NAMES.tableName),
    hasher: new KmsSecretHasher(kmsClient, endpoints.keyArns.credentialMac),
  };
  const issuedCredentials = options.seed ? await applySeed(options.seed, deps) : await seedDemoOrganization(deps);
  return { issuedCredentials, organizations: deps.organizations, publishableKeys: new DynamoPublishableKeyStore(documentClient, LOCAL_NAMES.tableName) };
}

/** The API Gateway emulator on PORT, with the runtime's admin route and, once the demo is set up, its pages. */
async function startApi(parts: { options: LocalRuntimeOptions; hosted: HostedFunctions; ports: LocalPorts; invokeAs: InvokeAs }, closers: Closers) {
  const { options, hosted } = parts;
  // GET /v3/js/tokenize.js serves the built library: build it from the source now.
  const script = assetOf(await writeTokenizeScript());
  let pages: NonNullable<ApiGatewayEmulatorOptions['localRoutes']> = async () => false;
  const adminToken = randomBytes(32).toString('base64url');
  const api = await startApiGatewayEmulator({
    localRoutes: async (req, res) => (await adminRoute(req, res, adminToken, () => api.flushAuthorizerCache())) || pages(req, res),
    routes: hosted.routes,
    functionsDir: hosted.functionsDir,
    invokeAs: parts.invokeAs,
    port: parts.ports.api,
    stage: LOCAL_NAMES.stage,
    binaryMediaTypes: ['multipart/form-data'],
    authorizerHandler: 'authorizer',
    authorizerCacheTtlSeconds: Number(process.env.AUTHORIZER_CACHE_TTL_SECONDS ?? AUTHORIZER_CACHE_TTL_SECONDS),
    log: options.log,
  });
  closers.push(api.close);
  return {
    url: api.url,
    port: api.port,
    adminToken,
    scriptVersion: script.version,
    servePages(routes: typeof pages) {
      pages = routes;
    },
  };
}
type Api = Awaited<ReturnType<typeof startApi>>;

/**
 * The file domain events are appended to, named after the API's port (known
 * only now); each run starts a fresh one. It goes last, once nothing can
 * append to it, or on exit however it comes about; kept only with the data
 * it describes (dataDir).
 */
async function writeEventsFile(parts: { dataDir: string | undefined; port: number; eventBridge: EventBridgeStandin }, closers: Closers): Promise<string> {
  const eventsFile = eventsFilePath(REPO_ROOT, parts.port);
  await rm(eventsFile, { force: true });
  await parts.eventBridge.writeTo(eventsFile);
  if (!parts.dataDir) {
    const deregister = onExitSync(() => rmSync(eventsFile, { force: true }));
    closers.unshift(async () => {
      deregister();
      await rm(eventsFile, { force: true });
    });
  }
  return eventsFile;
}

/** S3 notifications (the same trigger table CDK reads, driving the same handlers) and the Account Updater inbox (the stack's EventBridge rule and state machine). */
async function startTriggers(parts: { options: LocalRuntimeOptions; hosted: HostedFunctions; stores: Stores; invokeAs: InvokeAs }, closers: Closers): Promise<void> {
  const { hosted, invokeAs } = parts;
  const { server } = parts.stores.s3Local;
  const s3Events = routeS3Events({ server, triggers: hosted.triggers, buckets: { documents: LOCAL_NAMES.documentsBucket }, functionsDir: hosted.functionsDir, invokeAs, log: parts.options.log });
  closers.push(s3Events.close);
  // Imported only now: its S3 client (shared/aws/s3.ts) is built as the module loads, and must see the endpoint and path style this process now holds.
  const { routeInboxToEngine } = await import('./au-engine.ts');
  if (hosted.ruleTriggers.length > 0) {
    const { s3 } = await import('#shared/aws/s3.ts');
    const scanner = startMalwareScanner({ server, bucket: LOCAL_NAMES.documentsBucket, triggers: hosted.ruleTriggers, functionsDir: hosted.functionsDir, s3, invokeAs, log: parts.options.log });
    closers.push(scanner.close);
  }
  const inbox = routeInboxToEngine(server as never, LOCAL_NAMES.reportsBucket, { functionsDir: hosted.functionsDir, invokeAs, log: parts.options.log });
  closers.push(inbox.close);
}

/** The demo checkout (without a seed): a publishable key for the page's origin, known only once the port is, and its pages. */
async function startDemo(api: Api, provisioned: Awaited<ReturnType<typeof provision>>): Promise<LocalRuntime['demo']> {
  const merchantCredential = provisioned.issuedCredentials[0];
  if (!merchantCredential) return undefined;
  const publishableKey = await issuePublishableKey(
    { organizationId: LOCAL_NAMES.demoOrganizationId, locationId: LOCAL_NAMES.demoLocationId, allowedOrigins: [`http://localhost:${api.port}`] },
    { organizations: provisioned.organizations, publishableKeys: provisioned.publishableKeys },
  );
  api.servePages(await demoRoutes({ merchantCredential, publishableKey, scriptVersion: api.scriptVersion, apiUrl: () => `http://127.0.0.1:${api.port}` }));
  return { url: `${api.url}/demo/checkout`, publishableKey };
}

/**
 * One container per function, as Lambda gives each function its own: the
 * platform's variables plus exactly those its declared access calls for (the
 * same derivation CDK uses), and its own adapters. A handler that reads a
 * variable its route did not declare fails here as it would in AWS.
 */
export function functionContainers(options: {
  /** Every function hosted, with what it may touch (functionAccesses). */
  accesses: ReadonlyArray<readonly [string, FunctionAccess]>;
  platformEnvironment: Record<string, string>;
  resources: FunctionResources;
  /** Each function's own signing credential, as Lambda gives each its role's. */
  credentialOf?: (functionName: string) => SigningCredential;
}): Map<string, FunctionContainer> {
  return new Map(
    options.accesses.map(([name, access]) => [
      name,
      functionContainer({ ...options.platformEnvironment, ...(options.credentialOf ? credentialEnvironment(options.credentialOf(name)) : {}), ...functionEnvironment(access, options.resources) }),
    ]),
  );
}

/** A signing credential as Lambda hands a function its role's: in the environment the SDK reads. */
function credentialEnvironment(credential: SigningCredential): Record<string, string> {
  return { AWS_ACCESS_KEY_ID: credential.accessKeyId, AWS_SECRET_ACCESS_KEY: credential.secretAccessKey };
}

/** Every function the runtime hosts, with what it may touch. */
export function functionAccesses(routes: readonly RouteDefinition[], triggers: ReadonlyArray<S3Trigger | EventRuleTrigger>): Array<readonly [string, FunctionAccess]> {
  return [
    ...routes.map((route) => [route.handler, accessFor(route)] as const),
    ...triggers.map((trigger) => [trigger.handler, trigger.access] as const),
    ['authorizer', AUTHORIZER_ACCESS] as const,
    ...Object.entries(BACKGROUND_FUNCTION_ACCESS),
  ];
}

/**
 * The local counterpart of API Gateway's FlushStageAuthorizersCache, for the
 * revoke commands: loopback only (the whole runtime is), never in the route
 * table, and it takes the runtime file's token, so only the user who started
 * the runtime can call it. Resolves true when it answered.
 */
async function adminRoute(req: http.IncomingMessage, res: http.ServerResponse, token: string, flush: () => void): Promise<boolean> {
  if (new URL(req.url ?? '/', 'http://localhost').pathname !== ADMIN_FLUSH_PATH) return false;
  const presented = Buffer.from(/^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '');
  const expected = Buffer.from(token);
  const status = req.method !== 'POST' ? 405 : presented.length === expected.length && timingSafeEqual(presented, expected) ? 204 : 401;
  if (status === 204) flush();
  req.resume();
  res.writeHead(status, { 'Cache-Control': 'no-store' }).end();
  return true;
}

async function seedDemoOrganization(deps: Parameters<typeof applySeed>[1]): Promise<IssuedCredential[]> {
  const existing = await deps.organizations.get(LOCAL_NAMES.demoOrganizationId);
  if (!existing) await registerOrganization({ organizationId: LOCAL_NAMES.demoOrganizationId }, deps.organizations);
  return [await issueCredential({ organizationId: LOCAL_NAMES.demoOrganizationId }, deps)];
}
