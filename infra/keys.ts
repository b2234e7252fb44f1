import { Stack, Token } from 'aws-cdk-lib';
import { AccountPrincipal, AccountRootPrincipal, ArnPrincipal, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IGrantable, IPrincipal, IRole } from 'aws-cdk-lib/aws-iam';
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
 * A role is named in the key policy by a condition, not as its principal: the
 * statement trusts the role's account, and `aws:PrincipalArn` must equal the
 * role's ARN. KMS checks that every principal of a key policy exists when the
 * policy is put, so naming the role itself fails a first deploy whenever the key
 * is written before the role is (and a replaced role leaves the key trusting a
 * principal id that no longer exists); a condition is a string and is checked
 * only when the key is used.
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
    ...keyPolicyPrincipal(key, grantee.grantPrincipal, conditions),
    actions: [...actions],
    // In a key policy, "*" means this key.
    resources: ['*'],
  }));
}

/**
 * The key policy's principal and conditions for `principal`: a role (of this
 * stack, or by ARN) becomes its account plus `ArnEquals aws:PrincipalArn`;
 * anything else (the account itself) is named as it is.
 */
export function keyPolicyPrincipal(
  key: IKey,
  principal: IPrincipal,
  conditions?: Record<string, Record<string, unknown>>,
): { principals: IPrincipal[]; conditions?: Record<string, Record<string, unknown>> } {
  const roleArn = roleArnOf(principal);
  if (roleArn === undefined) return { principals: [principal], conditions };
  const account = Token.isUnresolved(roleArn) ? Stack.of(key).account : /^arn:[^:]+:iam::(\d{12}):/.exec(roleArn)?.[1] ?? Stack.of(key).account;
  return {
    principals: [new AccountPrincipal(account)],
    conditions: { ...conditions, ArnEquals: { ...conditions?.ArnEquals, 'aws:PrincipalArn': roleArn } },
  };
}

function roleArnOf(principal: IPrincipal): string | undefined {
  if (principal instanceof AccountRootPrincipal || principal instanceof AccountPrincipal) return undefined;
  if ('roleArn' in principal && typeof (principal as IRole).roleArn === 'string') return (principal as IRole).roleArn;
  if (principal instanceof ArnPrincipal && /:role\//.test(principal.arn)) return principal.arn;
  return undefined;
}
