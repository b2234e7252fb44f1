/**
 * Which KMS keys each function may use, and how, as data: CDK turns these
 * grants into IAM statements and key-policy statements (infra/access.ts), and
 * the local KMS stand-in refuses what they do not allow, as KMS would. A route
 * that only seals account numbers cannot open one, locally as in AWS. Keys
 * used through S3 on a function's behalf (document encryption) are granted
 * with the documents, not here. Nothing here imports the AWS SDK or CDK.
 */
import type { ItemKind } from './item-kinds.ts';
import { VAULT_ENCRYPTION_PURPOSE } from './names.ts';

export type KmsAction = 'GenerateDataKey' | 'Decrypt' | 'GenerateMac';

/** The vault key (account-number data keys), the fingerprint HMAC key, the request-hash HMAC key, the secure-key HMAC key. */
export type GrantedKey = 'vault' | 'fingerprint' | 'requestHash' | 'credentialMac';

export interface KeyGrant {
  readonly key: GrantedKey;
  readonly actions: readonly KmsAction[];
  /** The call must carry these encryption context pairs (IAM's `kms:EncryptionContext:<name>`, StringEquals). */
  readonly encryptionContext?: Readonly<Record<string, string>>;
}

/** The part of a function's declared access (shared/platform/function-environment.ts) its key grants follow from. */
export interface KeyAccess {
  readonly vault?: ReadonlyArray<'encrypt' | 'decrypt'>;
  readonly fingerprint?: boolean;
  readonly credentialMac?: boolean;
  /** Item kinds it writes: `idempotency` means it hashes requests for their keys (below). */
  readonly writes?: readonly ItemKind[];
}

/**
 * Whether a function hashes requests for the Idempotency-Key records it
 * writes (shared/aws/kms-request-hasher.ts), which PCI DSS 3.5.1.1 wants keyed
 * as the bodies hold card numbers. It does so under a key of its own, not the
 * fingerprint key: IAM cannot limit GenerateMac to one message, so a grant on
 * the fingerprint key would let every such function derive any organization's
 * fingerprint key.
 */
export function hashesRequests(access: KeyAccess): boolean {
  return access.writes?.includes('idempotency') === true;
}

/** Envelope encryption: a data key per organization seals locally (shared/aws/kms-vault.ts); kms:Encrypt is never called. */
const VAULT_ACTIONS: Record<'encrypt' | 'decrypt', KmsAction> = { encrypt: 'GenerateDataKey', decrypt: 'Decrypt' };

export function keyGrants(access: KeyAccess): KeyGrant[] {
  const grants: KeyGrant[] = [];
  if (access.vault?.length) {
    // Only for the vault's own data keys: the same key also encrypts documents through S3, which this grant does not open.
    grants.push({ key: 'vault', actions: [...new Set(access.vault.map((usage) => VAULT_ACTIONS[usage]))], encryptionContext: { purpose: VAULT_ENCRYPTION_PURPOSE } });
  }
  if (access.fingerprint) grants.push({ key: 'fingerprint', actions: ['GenerateMac'] });
  if (hashesRequests(access)) grants.push({ key: 'requestHash', actions: ['GenerateMac'] });
  if (access.credentialMac) grants.push({ key: 'credentialMac', actions: ['GenerateMac'] });
  return grants;
}

/** IAM's reading: some grant names the action on the key, and the call carries every encryption context pair it requires. */
export function keyGrantsAllow(grants: readonly KeyGrant[], requested: { action: string; key: GrantedKey | undefined; encryptionContext: Readonly<Record<string, string>> }): boolean {
  return grants.some(
    (grant) =>
      grant.key === requested.key &&
      (grant.actions as readonly string[]).includes(requested.action) &&
      Object.entries(grant.encryptionContext ?? {}).every(([name, value]) => requested.encryptionContext[name] === value),
  );
}
