import type { Environment } from './container.ts';
import { currentContainer } from './container.ts';
import type { PaypalCredentialSource } from '#shared/platform/function-environment.ts';
import { ENVIRONMENT_VARIABLES } from '#shared/platform/function-environment.ts';

/**
 * Runtime configuration: the one module that reads a function's environment,
 * once per function container (see container.ts). CDK sets the variables on
 * each function from its route's declared access, and the local runtime gives
 * each handler the same (shared/platform/function-environment.ts builds both); service
 * endpoints come from the SDK's own AWS_ENDPOINT_URL_<SERVICE> variables, so
 * the handlers never know where they run. A required value is checked when a
 * handler first needs it, so a function whose route lacks the grant fails
 * loudly, locally as in AWS.
 */

type Setting = keyof typeof ENVIRONMENT_VARIABLES;
type Settings = Readonly<Record<Setting, string | undefined>>;

const readSettings = new WeakMap<Environment, Settings>();

function settings(): Settings {
  const { environment } = currentContainer();
  let read = readSettings.get(environment);
  if (!read) {
    read = Object.freeze(
      Object.fromEntries(Object.entries(ENVIRONMENT_VARIABLES).map(([setting, name]) => [setting, environment[name] || undefined])) as Settings,
    );
    readSettings.set(environment, read);
  }
  return read;
}

function required(setting: Setting): string {
  const value = settings()[setting];
  if (value === undefined) throw new Error(`Missing required environment variable ${ENVIRONMENT_VARIABLES[setting]}`);
  return value;
}

export const config = {
  get webhookDeliveryQueueUrl(): string {
    return required('webhookDeliveryQueueUrl');
  },
  /** Set only by the local runtime: loopback receivers may be registered and delivered to. */
  get webhookAllowLoopback(): boolean {
    return settings().webhookAllowLoopback === 'true';
  },
  /** Set only by the local runtime: the retry steps after the first are at most this long. */
  get webhookLaterRetryCapSeconds(): number | undefined {
    const value = settings().webhookLaterRetryCapSeconds;
    return value === undefined ? undefined : Number(value);
  },
  get environmentName(): string {
    return settings().environmentName ?? 'local';
  },
  get tableName(): string {
    return required('tableName');
  },
  /** Retired indexes read in place of successors not built or not filled yet ("gsi10=gsi4,..."); set only while a stack is upgraded (store/table.ts). */
  get tableIndexStandIns(): string | undefined {
    return settings().tableIndexStandIns;
  },
  get auHistoryTableName(): string {
    return required('auHistoryTableName');
  },
  /** Webhook delivery state: lanes, settled messages, attempts, slots, parked messages. */
  get webhookTableName(): string {
    return required('webhookTableName');
  },
  get documentsBucket(): string {
    return required('documentsBucket');
  },
  get reportsBucket(): string {
    return required('reportsBucket');
  },
  /** Symmetric key that wraps the vault's data keys. */
  get vaultKeyId(): string {
    return required('vaultKeyId');
  },
  /** HMAC key that hashes API secure keys; the key material never leaves KMS. */
  get credentialMacKeyId(): string {
    return required('credentialMacKeyId');
  },
  /** HMAC key from which each organization's paymethod fingerprint key is derived (docs/vault.md). */
  get fingerprintKeyId(): string {
    return required('fingerprintKeyId');
  },
  /** HMAC key from which the Idempotency-Key request hash key is derived (docs/vault.md, "Idempotency keys"). */
  get requestHashKeyId(): string {
    return required('requestHashKeyId');
  },
  /**
   * KMS key every document object is written under (SSE-KMS: the vault key).
   * Locally s3rver takes the headers and form fields and encrypts nothing.
   */
  get documentsKmsKeyId(): string {
    return required('documentsKmsKeyId');
  },
  /** PayPal's API base URL: required, so a function never talks to the live API by default. */
  get paypalApiUrl(): string {
    return required('paypalApiUrl');
  },
  get paypalCredentials(): PaypalCredentialSource {
    return { secretArn: required('paypalSecretArn') };
  },
  /** The EventBridge bus domain events are published to (docs/events.md). */
  get eventBusName(): string {
    return required('eventBusName');
  },
  /** When set, links are built from it instead of from the request's Host and stage. */
  get publicBaseUrl(): string | undefined {
    return settings().publicBaseUrl;
  },
  /** S3 emulators without wildcard DNS need path-style addressing; AWS works either way. */
  get s3ForcePathStyle(): boolean {
    return settings().s3ForcePathStyle === 'true';
  },
};
