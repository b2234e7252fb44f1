/** Reading a synthesized template the way API Gateway and IAM will: by path, by method, by role. */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { readFileSync } from 'node:fs';
import { environmentSettings } from '#infra/environments.ts';
import type { EnvironmentSettings } from '#infra/environments.ts';
import { PaymentsApiStack } from '#infra/stack.ts';
import type { PaymentsApiStackProps } from '#infra/stack.ts';

type Properties = Record<string, unknown>;
interface CfnResource { Type: string; Properties: Properties }

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };

/** The settings `cdk synth -c environment=<name>` uses, from cdk.json. */
export function settings(name: string, overrides: Partial<EnvironmentSettings> = {}): EnvironmentSettings {
  return { ...environmentSettings(name, cdkJson.context.environments), ...overrides };
}

/** The CLI's feature flags, and no esbuild run: templates only. */
export function synthesize(
  environment: EnvironmentSettings,
  props: Omit<PaymentsApiStackProps, 'environment'> = {},
  extend?: (stack: PaymentsApiStack) => void,
): Template {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const stack = new PaymentsApiStack(app, `PaymentsApi-${environment.name}`, { environment, ...props });
  extend?.(stack);
  return Template.fromStack(stack);
}

export function resourcesOfType(template: Template, type: string): Record<string, CfnResource> {
  return template.findResources(type) as Record<string, CfnResource>;
}

/** `{ '/': <root ResourceId>, '/v3': ..., ... }`, as Method.ResourceId references them. */
export function resourceIdsByPath(template: Template): Map<string, unknown> {
  const [apiId] = Object.keys(resourcesOfType(template, 'AWS::ApiGateway::RestApi'));
  const root = { 'Fn::GetAtt': [apiId, 'RootResourceId'] };
  const resources = resourcesOfType(template, 'AWS::ApiGateway::Resource');
  const pathOf = (id: string): string => {
    const { ParentId, PathPart } = resources[id]!.Properties as { ParentId: { Ref?: string }; PathPart: string };
    const parent = ParentId.Ref ? pathOf(ParentId.Ref) : '';
    return `${parent}/${PathPart}`;
  };
  return new Map<string, unknown>([['/', root], ...Object.keys(resources).map((id) => [pathOf(id), { Ref: id }] as const)]);
}

export function findMethod(template: Template, path: string, httpMethod: string): Properties | undefined {
  const resourceId = resourceIdsByPath(template).get(path);
  if (!resourceId) return undefined;
  return Object.values(resourcesOfType(template, 'AWS::ApiGateway::Method'))
    .map((method) => method.Properties)
    .find((method) => method.HttpMethod === httpMethod && JSON.stringify(method.ResourceId) === JSON.stringify(resourceId));
}

/** The Lambda function a proxy method invokes. */
export function integrationFunctionId(template: Template, method: Properties): string {
  const functions = Object.keys(resourcesOfType(template, 'AWS::Lambda::Function'));
  const uri = JSON.stringify((method.Integration as Properties).Uri);
  const matches = functions.filter((id) => uri.includes(`"Fn::GetAtt":["${id}","Arn"]`));
  if (matches.length !== 1) throw new Error(`Expected one function in ${uri}, found ${matches.join(', ') || 'none'}`);
  return matches[0]!;
}

export interface Statement { Action: string | string[]; Resource: unknown; NotResource?: unknown; Condition?: unknown; Principal?: unknown; Effect?: string; Sid?: string }

/** The partition-key patterns a statement limits DynamoDB items to (IAM's dynamodb:LeadingKeys), if any. */
export function leadingKeysOf(statement: Statement | undefined): string[] | undefined {
  return (statement?.Condition as { 'ForAllValues:StringLike'?: { 'dynamodb:LeadingKeys'?: string[] } } | undefined)?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'];
}

/** Every statement of every policy attached to the function's role. */
export function roleStatements(template: Template, functionId: string): Statement[] {
  const fn = resourcesOfType(template, 'AWS::Lambda::Function')[functionId]!;
  const [roleId] = (fn.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'];
  return Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))
    .filter((policy) => (policy.Properties.Roles as unknown[]).some((role) => JSON.stringify(role) === JSON.stringify({ Ref: roleId })))
    .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

/** The IAM role id of a function. */
export function roleIdOf(template: Template, functionId: string): string {
  const fn = resourcesOfType(template, 'AWS::Lambda::Function')[functionId]!;
  return (fn.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
}

/** The key policy statements of a KMS key. */
export function keyPolicyStatements(template: Template, keyId: string): Statement[] {
  const key = resourcesOfType(template, 'AWS::KMS::Key')[keyId]!;
  return (key.Properties.KeyPolicy as { Statement: Statement[] }).Statement;
}

/** The KMS key whose description contains `fragment`. */
export function keyIdByDescription(template: Template, fragment: string): string {
  const ids = Object.entries(resourcesOfType(template, 'AWS::KMS::Key'))
    .filter(([, key]) => String(key.Properties.Description).includes(fragment))
    .map(([id]) => id);
  if (ids.length !== 1) throw new Error(`Expected one key described with "${fragment}", found ${ids.length}`);
  return ids[0]!;
}

/** The documents bucket, or the bucket the data buckets' server access logs go to (the one without logging of its own). */
export function bucketId(template: Template, kind: 'documents' | 'access-logs'): string {
  const ids = Object.entries(resourcesOfType(template, 'AWS::S3::Bucket'))
    .filter(([id, bucket]) => (kind === 'documents' ? id.startsWith('DocumentsBucket') : bucket.Properties.LoggingConfiguration === undefined))
    .map(([id]) => id);
  if (ids.length !== 1) throw new Error(`Expected one ${kind} bucket, found ${ids.length}`);
  return ids[0]!;
}

export function actionsOf(statements: readonly Statement[]): string[] {
  return [...new Set(statements.flatMap((statement) => [statement.Action].flat()))].sort();
}

export function environmentOf(template: Template, functionId: string): Record<string, unknown> {
  const fn = resourcesOfType(template, 'AWS::Lambda::Function')[functionId]!;
  return (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
}

/** The paymethod table (the stack's `Table`; the Account Updater's history table is the other one), as `{ Ref: id }`. */
export function paymethodTableRef(template: Template): { Ref: string } {
  const ids = Object.keys(resourcesOfType(template, 'AWS::DynamoDB::Table')).filter((id) => id.startsWith('Table'));
  if (ids.length !== 1) throw new Error(`Expected one paymethod table, found ${ids.length}`);
  return { Ref: ids[0]! };
}

/** The single resource of a type, as `{ Ref: id }`. */
export function refTo(template: Template, type: string): { Ref: string } {
  const ids = Object.keys(resourcesOfType(template, type));
  if (ids.length !== 1) throw new Error(`Expected one ${type}, found ${ids.length}`);
  return { Ref: ids[0]! };
}

/**
 * "role -> key: action" for every KMS action an IAM policy lets a role use on
 * a key that trusts only the principals its own policy names (a scoped key:
 * the account root may administer it, not use it) when no statement of that
 * key policy backs it: one that allows the action to the role under the same
 * conditions, or none. KMS refuses a call unless both policies allow it, so an
 * IAM grant the key policy does not back, or backs only for other actions or
 * under narrower conditions, is ignored (grantKeyUsage in infra/keys.ts writes
 * both alike).
 */
export function keyGrantsTheKeyIgnores(template: Template): string[] {
  const keyPolicies = Object.entries(resourcesOfType(template, 'AWS::KMS::Key')).map(([keyId, key]) => [keyId, (key.Properties.KeyPolicy as { Statement: Statement[] }).Statement] as const);
  const scoped = keyPolicies.filter(([, statements]) => !statements.some((statement) => [statement.Action].flat().includes('kms:*')));
  const ignored: string[] = [];
  for (const policy of Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))) {
    const roles = ((policy.Properties.Roles ?? []) as Array<{ Ref?: string }>).flatMap((role) => (role.Ref ? [role.Ref] : []));
    for (const statement of (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement) {
      const kmsActions = [statement.Action].flat().filter((action) => action.startsWith('kms:'));
      if (kmsActions.length === 0 || (statement.Effect ?? 'Allow') !== 'Allow') continue;
      for (const [keyId, keyStatements] of scoped) {
        if (!JSON.stringify(statement.Resource).includes(`"${keyId}"`)) continue;
        for (const role of roles) {
          const backing = keyStatements.filter(
            (keyStatement) =>
              (keyStatement.Effect ?? 'Allow') === 'Allow' &&
              JSON.stringify(keyStatement.Principal).includes(`"${role}"`) &&
              (keyStatement.Condition === undefined || JSON.stringify(keyStatement.Condition) === JSON.stringify(statement.Condition)),
          );
          for (const action of kmsActions) {
            if (!backing.some((keyStatement) => [keyStatement.Action].flat().some((allowed) => actionCovers(allowed, action)))) ignored.push(`${role} -> ${keyId}: ${action}`);
          }
        }
      }
    }
  }
  return ignored;
}

/** Whether a policy's action (`kms:GenerateDataKey*` style wildcards, any case) covers `action` (taken literally). */
function actionCovers(allowed: string, action: string): boolean {
  const pattern = allowed.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${pattern}$`, 'i').test(action);
}
