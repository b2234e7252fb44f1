/** Reading a synthesized template the way API Gateway and IAM will: by path, by method, by role. */
import { App, NestedStack } from 'aws-cdk-lib';
import type { CfnResource as CdkCfnResource, Stack } from 'aws-cdk-lib';
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
  return deployedTemplate(stack);
}

type Json = unknown;

/**
 * A stack and its nested stacks as one template: what `cdk deploy` creates, read
 * as if it were a single stack. Each nested stack's resources join the parent's
 * with their own logical ids; a nested stack's parameter reads as the parent's
 * value for it, and a parent's (or sibling's) `Fn::GetAtt [<nested>, Outputs.X]`
 * as the nested output's value, so references read as they would in one template
 * (`{ Ref: <table> }`, `{ 'Fn::GetAtt': [<key>, 'Arn'] }`). Outputs are the
 * parent's, which is what the CLIs read.
 */
export function deployedTemplate(stack: Stack): Template {
  return Template.fromJSON(flatten(stack) as Record<string, unknown>);
}

function flatten(stack: Stack): { Resources: Record<string, { Properties?: Record<string, Json>; DependsOn?: string[] }>; Outputs?: Record<string, { Value: Json }> } & Record<string, Json> {
  const template = structuredClone(Template.fromStack(stack).toJSON()) as ReturnType<typeof flatten>;
  const nestedOutputs = new Map<string, Record<string, { Value: Json }>>();
  for (const nested of stack.node.findAll().filter((construct): construct is NestedStack => NestedStack.isNestedStack(construct) && construct.nestedStackParent === stack)) {
    const resourceId = stack.resolve((nested.nestedStackResource as CdkCfnResource).logicalId) as string;
    const parameters = (template.Resources[resourceId]!.Properties?.Parameters ?? {}) as Record<string, Json>;
    let inner = flatten(nested);
    // CDK's per-stack singletons (the bucket-notifications function) have one logical id in every stack: the nested one's gets its stack's id after it.
    for (const id of Object.keys(inner.Resources).filter((candidate) => candidate in template.Resources)) {
      inner = JSON.parse(JSON.stringify(inner).replaceAll(`"${id}"`, `"${id}${nested.node.id}"`)) as typeof inner;
    }
    const withParameters = replace(inner, (value) => {
      const ref = (value as { Ref?: unknown }).Ref;
      return typeof ref === 'string' && ref in parameters ? parameters[ref] : undefined;
    }) as typeof inner;
    for (const [id, resource] of Object.entries(withParameters.Resources)) {
      template.Resources[id] = resource;
    }
    nestedOutputs.set(resourceId, withParameters.Outputs ?? {});
    delete template.Resources[resourceId];
  }
  for (const resource of Object.values(template.Resources)) {
    if (resource.DependsOn) resource.DependsOn = resource.DependsOn.filter((id) => !nestedOutputs.has(id));
  }
  // An output's value may itself read another nested stack's output: resolve until none is left.
  let resolved: Json = template;
  for (let depth = 0; depth <= nestedOutputs.size; depth++) {
    resolved = replace(resolved, (value) => {
      const getAtt = (value as { 'Fn::GetAtt'?: unknown })['Fn::GetAtt'];
      if (!Array.isArray(getAtt) || !nestedOutputs.has(getAtt[0] as string)) return undefined;
      const name = String(getAtt[1]).replace(/^Outputs\./, '');
      const output = nestedOutputs.get(getAtt[0] as string)![name];
      if (!output) throw new Error(`${String(getAtt[0])} has no output ${name}`);
      return output.Value;
    });
  }
  return resolved as ReturnType<typeof flatten>;
}

/** `value` with every object `substitute` returns something for replaced by that, depth first. */
function replace(value: Json, substitute: (value: object) => Json | undefined): Json {
  if (Array.isArray(value)) return value.map((item) => replace(item, substitute));
  if (value === null || typeof value !== 'object') return value;
  const replacement = substitute(value);
  if (replacement !== undefined) return replace(replacement, substitute);
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, replace(item, substitute)]));
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
    .filter((policy) => (policy.Properties.Roles as unknown[]).some((role) => roleNamed(role) === roleId))
    .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

/**
 * The logical id of the role a policy's `Roles` entry names: `{ Ref: <role> }`, or, for a
 * function's role, which the parent stack holds (infra/functions.ts), its name as CloudFormation
 * cuts it from the role's ARN (`Fn::Select` of `Fn::Split` of `Fn::GetAtt [<role>, Arn]`).
 */
function roleNamed(entry: unknown): string | undefined {
  const ref = (entry as { Ref?: unknown }).Ref;
  if (typeof ref === 'string') return ref;
  const roleArn = /^\{"Fn::Select":\[1,\{"Fn::Split":\["\/",\{"Fn::Select":\[5,\{"Fn::Split":\[":",\{"Fn::GetAtt":\["([A-Za-z0-9]+)","Arn"\]\}\]\}\]\}\]\}\]\}$/.exec(JSON.stringify(entry));
  return roleArn?.[1];
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

/**
 * The documents bucket, the bucket the data buckets' server access logs go to (it
 * has no logging of its own and replicates), or the locked log archive it
 * replicates to.
 */
export function bucketId(template: Template, kind: 'documents' | 'access-logs' | 'log-archive'): string {
  const matches: Record<typeof kind, (id: string, properties: Properties) => boolean> = {
    'documents': (id) => id.startsWith('DocumentsBucket'),
    'access-logs': (_id, properties) => properties.LoggingConfiguration === undefined && properties.ReplicationConfiguration !== undefined,
    // The documents bucket has Object Lock too (retention of evidence); the archive is the locked bucket that is not it.
    'log-archive': (id, properties) => properties.ObjectLockEnabled === true && !id.startsWith('DocumentsBucket'),
  };
  const ids = Object.entries(resourcesOfType(template, 'AWS::S3::Bucket'))
    .filter(([id, bucket]) => matches[kind](id, bucket.Properties))
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
    const roles = ((policy.Properties.Roles ?? []) as unknown[]).flatMap((role) => roleNamed(role) ?? []);
    for (const statement of (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement) {
      const kmsActions = [statement.Action].flat().filter((action) => action.startsWith('kms:'));
      if (kmsActions.length === 0 || (statement.Effect ?? 'Allow') !== 'Allow') continue;
      for (const [keyId, keyStatements] of scoped) {
        if (!JSON.stringify(statement.Resource).includes(`"${keyId}"`)) continue;
        for (const role of roles) {
          const backing = keyStatements.filter(
            (keyStatement) =>
              (keyStatement.Effect ?? 'Allow') === 'Allow' &&
              keyStatementNames(keyStatement, role) &&
              (keyStatement.Condition === undefined || JSON.stringify(conditionBesidesPrincipal(keyStatement)) === JSON.stringify(statement.Condition)),
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

/**
 * Whether a key policy statement names `principal` (a role's logical id, or an
 * ARN): as its principal, or (infra/keys.ts) by the `aws:PrincipalArn` condition
 * beside its account as principal.
 */
export function keyStatementNames(statement: Statement, principal: string): boolean {
  return JSON.stringify(principalArnCondition(statement) ?? statement.Principal).includes(`"${principal}"`);
}

/** The `ArnEquals aws:PrincipalArn` value of a statement, if it has one. */
export function principalArnCondition(statement: Statement): unknown {
  return (statement.Condition as { ArnEquals?: Record<string, unknown> } | undefined)?.ArnEquals?.['aws:PrincipalArn'];
}

/** A statement's conditions less its `aws:PrincipalArn` (what an identity policy's copy of it says), undefined when none is left. */
export function conditionBesidesPrincipal(statement: Statement): unknown {
  const condition = structuredClone((statement.Condition ?? {}) as Record<string, Record<string, unknown>>);
  if (condition.ArnEquals) {
    delete condition.ArnEquals['aws:PrincipalArn'];
    if (Object.keys(condition.ArnEquals).length === 0) delete condition.ArnEquals;
  }
  return Object.keys(condition).length === 0 ? undefined : condition;
}

/** Whether a policy's action (`kms:GenerateDataKey*` style wildcards, any case) covers `action` (taken literally). */
function actionCovers(allowed: string, action: string): boolean {
  const pattern = allowed.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${pattern}$`, 'i').test(action);
}
