/**
 * The rules a platform group runs on every template, checked at synth: each
 * breach is an error annotation on the resource, so `cdk synth` and
 * `cdk deploy` stop with the rule's id and the resource's path. Four kinds:
 * encryption at rest, no public access, logging, retention. A resource that
 * must break a rule says why with `exemptFromRule`, beside its definition.
 */
import { Annotations, CfnResource, Stack } from 'aws-cdk-lib';
import type { IAspect } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

export type RuleKind = 'encryption' | 'public-access' | 'logging' | 'retention';

type Properties = Record<string, unknown>;
interface Rule {
  readonly id: string;
  readonly kind: RuleKind;
  readonly type: string;
  readonly description: string;
  /** Whether the resource's (resolved) properties break the rule. */
  readonly breaks: (properties: Properties) => boolean;
}

interface Statement { Effect?: string; Principal?: unknown; Condition?: unknown }

const statementsOf = (document: unknown): Statement[] => [((document ?? {}) as { Statement?: Statement | Statement[] }).Statement ?? []].flat();
/** An Allow to anyone at all, with no condition to narrow who. */
const allowsAnyone = (document: unknown): boolean => statementsOf(document).some((statement) => {
  const principal = statement.Principal;
  const anyone = principal === '*' || [(principal as { AWS?: unknown } | undefined)?.AWS].flat().includes('*');
  return (statement.Effect ?? 'Allow') === 'Allow' && anyone && statement.Condition === undefined;
});
const path = (properties: Properties, ...keys: string[]): unknown =>
  keys.reduce<unknown>((value, key) => (value as Properties | undefined)?.[key], properties);

/** Every rule, by id: the ids are what an exemption names. */
export const PLATFORM_RULES: readonly Rule[] = [
  { id: 'ENC-S3', kind: 'encryption', type: 'AWS::S3::Bucket', description: 'a bucket has default encryption', breaks: (p) => path(p, 'BucketEncryption', 'ServerSideEncryptionConfiguration') === undefined },
  { id: 'ENC-DDB', kind: 'encryption', type: 'AWS::DynamoDB::Table', description: 'a table is encrypted with a KMS key (AWS managed or ours)', breaks: (p) => path(p, 'SSESpecification', 'SSEEnabled') !== true },
  { id: 'ENC-SQS', kind: 'encryption', type: 'AWS::SQS::Queue', description: 'a queue is encrypted', breaks: (p) => p.KmsMasterKeyId === undefined && p.SqsManagedSseEnabled !== true },
  { id: 'ENC-SNS', kind: 'encryption', type: 'AWS::SNS::Topic', description: 'a topic is encrypted with a KMS key', breaks: (p) => p.KmsMasterKeyId === undefined },
  { id: 'PUB-S3-BLOCK', kind: 'public-access', type: 'AWS::S3::Bucket', description: 'a bucket blocks every kind of public access', breaks: (p) => ['BlockPublicAcls', 'BlockPublicPolicy', 'IgnorePublicAcls', 'RestrictPublicBuckets'].some((key) => path(p, 'PublicAccessBlockConfiguration', key) !== true) },
  { id: 'PUB-S3-POLICY', kind: 'public-access', type: 'AWS::S3::BucketPolicy', description: 'a bucket policy allows no one-at-all without a condition', breaks: (p) => allowsAnyone(p.PolicyDocument) },
  { id: 'PUB-KMS-POLICY', kind: 'public-access', type: 'AWS::KMS::Key', description: 'a key policy allows no one-at-all without a condition', breaks: (p) => allowsAnyone(p.KeyPolicy) },
  { id: 'PUB-SNS-POLICY', kind: 'public-access', type: 'AWS::SNS::TopicPolicy', description: 'a topic policy allows no one-at-all without a condition', breaks: (p) => allowsAnyone(p.PolicyDocument) },
  { id: 'PUB-LAMBDA', kind: 'public-access', type: 'AWS::Lambda::Permission', description: 'a function may not be invoked by anyone at all', breaks: (p) => p.Principal === '*' },
  { id: 'LOG-S3', kind: 'logging', type: 'AWS::S3::Bucket', description: 'a bucket writes server access logs', breaks: (p) => p.LoggingConfiguration === undefined },
  { id: 'LOG-LAMBDA', kind: 'logging', type: 'AWS::Lambda::Function', description: 'a function logs to a log group of the stack (not one Lambda creates and keeps forever)', breaks: (p) => path(p, 'LoggingConfig', 'LogGroup') === undefined },
  { id: 'LOG-APIGW', kind: 'logging', type: 'AWS::ApiGateway::Stage', description: 'a stage writes access logs', breaks: (p) => path(p, 'AccessLogSetting', 'DestinationArn') === undefined },
  { id: 'LOG-SFN', kind: 'logging', type: 'AWS::StepFunctions::StateMachine', description: 'a state machine logs its executions', breaks: (p) => p.LoggingConfiguration === undefined },
  { id: 'RET-LOGS', kind: 'retention', type: 'AWS::Logs::LogGroup', description: 'a log group expires its events', breaks: (p) => p.RetentionInDays === undefined },
  { id: 'RET-S3-VERSIONS', kind: 'retention', type: 'AWS::S3::Bucket', description: 'a versioned bucket expires old versions', breaks: (p) => path(p, 'VersioningConfiguration', 'Status') === 'Enabled' && !(path(p, 'LifecycleConfiguration', 'Rules') as Properties[] | undefined ?? []).some((rule) => rule.NoncurrentVersionExpiration !== undefined || rule.NoncurrentVersionExpirationInDays !== undefined) },
  { id: 'RET-DDB-PITR', kind: 'retention', type: 'AWS::DynamoDB::Table', description: 'a table keeps point-in-time recovery', breaks: (p) => path(p, 'PointInTimeRecoverySpecification', 'PointInTimeRecoveryEnabled') !== true },
];

const EXEMPTIONS = new WeakMap<IConstruct, Map<string, string>>();

/** `construct` (and everything under it) may break rule `ruleId`, for `reason`, which the exemption keeps. */
export function exemptFromRule(construct: IConstruct, ruleId: string, reason: string): void {
  if (!PLATFORM_RULES.some((rule) => rule.id === ruleId)) throw new Error(`No platform rule ${ruleId}`);
  if (reason.trim().length < 20) throw new Error(`An exemption from ${ruleId} needs a reason`);
  const exemptions = EXEMPTIONS.get(construct) ?? new Map<string, string>();
  EXEMPTIONS.set(construct, exemptions.set(ruleId, reason));
}

function exemptionOf(resource: IConstruct, ruleId: string): string | undefined {
  return resource.node.scopes.map((scope) => EXEMPTIONS.get(scope)?.get(ruleId)).find((reason) => reason !== undefined);
}

/** The Aspect: add it to an app or stack (`Aspects.of(scope).add(new PlatformRules())`). */
export class PlatformRules implements IAspect {
  visit(node: IConstruct): void {
    if (!CfnResource.isCfnResource(node)) return;
    const rules = PLATFORM_RULES.filter((rule) => rule.type === node.cfnResourceType);
    if (rules.length === 0) return;
    const properties = resolvedProperties(node);
    for (const rule of rules) {
      if (!rule.breaks(properties) || exemptionOf(node, rule.id) !== undefined) continue;
      Annotations.of(node).addError(`[${rule.id}] ${rule.kind}: ${rule.description}. Fix it, or exempt it with exemptFromRule (infra/platform-rules.ts) and a reason.`);
    }
  }
}

/** The properties as the template will hold them (property overrides included). */
function resolvedProperties(resource: CfnResource): Properties {
  // _toCloudFormation is how CDK itself renders a resource; the public API offers no rendered view before synthesis.
  const rendered = (resource as unknown as { _toCloudFormation(): { Resources: Record<string, { Properties?: Properties }> } })._toCloudFormation();
  const [only] = Object.values(Stack.of(resource).resolve(rendered.Resources) as Record<string, { Properties?: Properties }>);
  return only?.Properties ?? {};
}
