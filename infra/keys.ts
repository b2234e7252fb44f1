import { AccountRootPrincipal, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IKey, KeyProps } from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';

/**
 * Key administration, delegated to the account's IAM policies (CloudFormation's
 * deployment role needs it to create, update and delete the key; KMS refuses a
 * policy that would lock its author out). No usage action is delegated: no
 * Encrypt, Decrypt, GenerateDataKey, GenerateMac and no CreateGrant (a grant
 * would be a way around the usage statements).
 */
export const KEY_ADMIN_ACTIONS = [
  'kms:CancelKeyDeletion',
  'kms:CreateAlias',
  'kms:DeleteAlias',
  'kms:Describe*',
  'kms:Disable*',
  'kms:Enable*',
  'kms:Get*',
  'kms:List*',
  'kms:PutKeyPolicy',
  'kms:RetireGrant',
  'kms:RevokeGrant',
  'kms:ScheduleKeyDeletion',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:UpdateAlias',
  'kms:UpdateKeyDescription',
] as const;

/**
 * A customer managed key whose policy allows administration to the account and
 * usage only to the principals given to `grantKeyUsage` (the stack's function
 * roles, named one by one). The CDK default policy, `kms:*` for the account
 * root, is not used: it would let any IAM identity with a broad policy decrypt.
 */
export function scopedKey(scope: Construct, id: string, props: Omit<KeyProps, 'policy' | 'admins'>): Key {
  return new Key(scope, id, {
    ...props,
    policy: new PolicyDocument({
      statements: [
        new PolicyStatement({
          sid: 'KeyAdministration',
          principals: [new AccountRootPrincipal()],
          actions: [...KEY_ADMIN_ACTIONS],
          resources: ['*'],
        }),
      ],
    }),
  });
}

/**
 * Lets `grantee` use `key` for `actions`, in both places KMS looks: the key
 * policy (which no longer delegates usage to IAM) and the grantee's identity
 * policy (so the role's policy documents what it can do). `conditions` apply to
 * both, e.g. kms:ViaService for use through S3 only.
 *
 * Every function that uses a key created with `scopedKey` must be granted
 * through here; `key.grant(...)` alone writes only the identity policy and KMS
 * would refuse the call.
 */
export function grantKeyUsage(
  key: IKey,
  grantee: IGrantable,
  actions: readonly string[],
  conditions?: Record<string, Record<string, unknown>>,
): void {
  if (!actions.length) return;
  grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions: [...actions], resources: [key.keyArn], conditions }));
  key.addToResourcePolicy(new PolicyStatement({
    principals: [grantee.grantPrincipal],
    actions: [...actions],
    // In a key policy, "*" means this key.
    resources: ['*'],
    conditions,
  }));
}
