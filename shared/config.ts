/**
 * Runtime configuration, read from the environment once per process. The same
 * variables are set by CDK on each function and by the local runtime; service
 * endpoints come from the SDK's own AWS_ENDPOINT_URL_<SERVICE> variables, so the
 * handlers never know where they run.
 */

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Missing required environment variable ${name}`);
  return value;
}

export const config = {
  get environmentName(): string {
    return process.env.ENVIRONMENT_NAME ?? 'local';
  },
  get tableName(): string {
    return required('TABLE_NAME');
  },
  get documentsBucket(): string {
    return required('DOCUMENTS_BUCKET');
  },
  get reportsBucket(): string {
    return required('REPORTS_BUCKET');
  },
  /** Symmetric key that wraps the vault's data keys. */
  get vaultKeyId(): string {
    return required('VAULT_KEY_ID');
  },
  /** HMAC key that hashes API secure keys; the key material never leaves KMS. */
  get credentialMacKeyId(): string {
    return required('CREDENTIAL_MAC_KEY_ID');
  },
  /** HMAC key from which each organization's paymethod fingerprint key is derived (docs/vault.md). */
  get fingerprintKeyId(): string {
    return required('FINGERPRINT_KEY_ID');
  },
  /**
   * KMS key for SSE-KMS on document objects (the vault key in AWS). Unset
   * locally: s3rver has no KMS, and the bucket's default encryption applies.
   */
  get documentsKmsKeyId(): string | undefined {
    return process.env.DOCUMENTS_KMS_KEY_ID || undefined;
  },
  /** The EventBridge bus domain events are published to (docs/events.md). */
  get eventBusName(): string {
    return required('EVENT_BUS_NAME');
  },
  /** When set, links are built from it instead of from the request's Host and stage. */
  get publicBaseUrl(): string | undefined {
    return process.env.PUBLIC_BASE_URL || undefined;
  },
  /** S3 emulators without wildcard DNS need path-style addressing; AWS works either way. */
  get s3ForcePathStyle(): boolean {
    return process.env.S3_FORCE_PATH_STYLE === 'true';
  },
};
