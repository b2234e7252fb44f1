/**
 * Enough of IAM's policy evaluation to read a synthesized resource policy (a
 * bucket policy, a key policy) the way S3 and KMS will for one request: which
 * statements match the principal, action, resource and request context, and
 * whether a Deny or an Allow among them decides it. Template values are
 * rendered to ARN strings first (`render`), with the account, region and
 * partition below.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import type { Statement } from './template-helpers.ts';

export const ACCOUNT = '123456789012';
export const REGION = 'eu-west-1';

export interface PolicyRequest {
  /** The caller's ARN as IAM sees it for a role session: the role's ARN (aws:PrincipalArn). */
  readonly principalArn: string;
  readonly action: string;
  /** The resource's ARN; a key policy's statements name `*`, so any value matches them. */
  readonly resource: string;
  /** Condition keys of the request (aws:SecureTransport, kms:ViaService, ...); aws:PrincipalArn and aws:PrincipalAccount are added. */
  readonly context?: Readonly<Record<string, string>>;
}

/**
 * `denied`: a Deny matches (nothing else can allow it); `allowed`: an Allow
 * matches and no Deny; `not allowed`: neither (only the caller's own IAM policy
 * can allow it, which KMS ignores unless the key policy delegates to IAM).
 */
export function decide(statements: readonly Statement[], request: PolicyRequest): 'allowed' | 'denied' | 'not allowed' {
  const account = /^arn:[^:]+:iam::(\d{12}):/.exec(request.principalArn)?.[1] ?? '';
  const context: Record<string, string> = { 'aws:PrincipalArn': request.principalArn, 'aws:PrincipalAccount': account, ...request.context };
  const matching = statements.filter((statement) =>
    matchesAction(statement, request.action)
    && matchesResource(statement, request.resource)
    && matchesPrincipal(statement.Principal, request.principalArn, account)
    && conditionsHold(statement.Condition, context));
  if (matching.some((statement) => statement.Effect === 'Deny')) return 'denied';
  return matching.some((statement) => (statement.Effect ?? 'Allow') === 'Allow') ? 'allowed' : 'not allowed';
}

function matchesAction(statement: Statement, action: string): boolean {
  const notAction = (statement as { NotAction?: string | string[] }).NotAction;
  if (notAction !== undefined) return ![notAction].flat().some((pattern) => glob(pattern, true).test(action));
  return [statement.Action].flat().some((pattern) => glob(pattern, true).test(action));
}

function matchesResource(statement: Statement, resource: string): boolean {
  if (statement.NotResource !== undefined) return ![statement.NotResource].flat().some((pattern) => glob(String(pattern)).test(resource));
  return [statement.Resource].flat().some((pattern) => glob(String(pattern)).test(resource));
}

function matchesPrincipal(principal: unknown, principalArn: string, account: string): boolean {
  if (principal === '*') return true;
  const named = [(principal as { AWS?: unknown } | undefined)?.AWS ?? []].flat().map(String);
  // An account's root as principal stands for every principal of that account (then limited by IAM and the conditions).
  return named.some((arn) => arn === '*' || arn === principalArn || arn === `arn:aws:iam::${account}:root` || arn === account);
}

function conditionsHold(condition: unknown, context: Record<string, string>): boolean {
  for (const [rawOperator, entries] of Object.entries((condition ?? {}) as Record<string, Record<string, unknown>>)) {
    const ifExists = rawOperator.endsWith('IfExists');
    const operator = rawOperator.replace(/IfExists$/, '').replace(/^ForAnyValue:|^ForAllValues:/, '');
    for (const [key, expected] of Object.entries(entries)) {
      const actual = context[key];
      const values = [expected].flat().map(String);
      if (actual === undefined) {
        if (ifExists || operator.includes('Not')) continue;
        return false;
      }
      const test: Record<string, () => boolean> = {
        StringEquals: () => values.includes(actual),
        StringNotEquals: () => !values.includes(actual),
        StringLike: () => values.some((value) => glob(value).test(actual)),
        StringNotLike: () => !values.some((value) => glob(value).test(actual)),
        ArnEquals: () => values.includes(actual),
        ArnLike: () => values.some((value) => glob(value).test(actual)),
        ArnNotEquals: () => !values.includes(actual),
        Bool: () => values.includes(actual),
        NumericLessThan: () => values.some((value) => Number(actual) < Number(value)),
      };
      if (!test[operator]) throw new Error(`policy-evaluation does not know the condition operator ${rawOperator}`);
      if (!test[operator]()) return false;
    }
  }
  return true;
}

function glob(pattern: string, ignoreCase = false): RegExp {
  const body = pattern.split('*').map((part) => part.split('?').map((piece) => piece.replace(/[.+^${}()|[\]\\]/g, '\\$&')).join('.')).join('.*');
  return new RegExp(`^${body}$`, ignoreCase ? 'i' : '');
}

/**
 * A template value as the string CloudFormation would make of it: pseudo
 * parameters are ACCOUNT, REGION and `aws`; `Ref` of a bucket is its logical
 * id (standing for its name), `Fn::GetAtt [id, Arn]` the ARN of that name.
 */
export function render(template: Template, value: unknown): unknown {
  const resources = template.toJSON().Resources as Record<string, { Type: string }>;
  const pseudo: Record<string, string> = { 'AWS::AccountId': ACCOUNT, 'AWS::Region': REGION, 'AWS::Partition': 'aws', 'AWS::URLSuffix': 'amazonaws.com' };
  const arnOf = (id: string): string => {
    const type = resources[id]?.Type;
    if (type === 'AWS::S3::Bucket') return `arn:aws:s3:::${id}`;
    if (type === 'AWS::IAM::Role') return `arn:aws:iam::${ACCOUNT}:role/${id}`;
    if (type === 'AWS::KMS::Key') return `arn:aws:kms:${REGION}:${ACCOUNT}:key/${id}`;
    return `arn:aws:unknown:${REGION}:${ACCOUNT}:${id}`;
  };
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (node === null || typeof node !== 'object') return node;
    const object = node as Record<string, unknown>;
    if (typeof object.Ref === 'string') return pseudo[object.Ref] ?? object.Ref;
    if (Array.isArray(object['Fn::GetAtt'])) {
      const [id, attribute] = object['Fn::GetAtt'] as [string, string];
      return attribute === 'Arn' ? arnOf(id) : `${id}.${attribute}`;
    }
    if (Array.isArray(object['Fn::Join'])) {
      const [separator, parts] = object['Fn::Join'] as [string, unknown[]];
      return parts.map(walk).join(separator);
    }
    return Object.fromEntries(Object.entries(object).map(([key, item]) => [key, walk(item)]));
  };
  return walk(value);
}
