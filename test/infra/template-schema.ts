/**
 * Every resource of a template checked against the CloudFormation registry
 * schema of its type, as `@aws-cdk/aws-service-spec` holds it: an unknown
 * type or property, a missing required property, a value of the wrong kind
 * (a list for a string, a word for a number, a value outside the allowed ones)
 * is a finding. What CloudFormation resolves at deploy time (`Ref`, `Fn::*`)
 * passes as any kind; custom resources have no schema and are counted apart.
 */
import { loadAwsServiceSpecSync } from '@aws-cdk/aws-service-spec';

type SpecDatabase = ReturnType<typeof loadAwsServiceSpecSync>;

let database: SpecDatabase | undefined;
const spec = (): SpecDatabase => (database ??= loadAwsServiceSpecSync());
const resourceSchema = (type: string) => spec().lookup('resource', 'cloudFormationType', 'equals', type)[0];
type Property = NonNullable<ReturnType<typeof resourceSchema>>['properties'][string];
type PropertyType = Property['type'];

export interface SchemaReport {
  /** `<logical id> (<type>): <path>: <what is wrong>`. */
  readonly findings: string[];
  /** Resources checked against a schema, by type. */
  readonly checked: Record<string, number>;
  /** Custom resources (no schema), by type. */
  readonly custom: Record<string, number>;
}

export function validateTemplate(template: { Resources?: Record<string, { Type: string; Properties?: Record<string, unknown> }> }): SchemaReport {
  const findings: string[] = [];
  const checked: Record<string, number> = {};
  const custom: Record<string, number> = {};
  for (const [id, resource] of Object.entries(template.Resources ?? {})) {
    if (resource.Type.startsWith('Custom::') || resource.Type === 'AWS::CloudFormation::CustomResource') {
      custom[resource.Type] = (custom[resource.Type] ?? 0) + 1;
      continue;
    }
    const definition = resourceSchema(resource.Type);
    if (!definition) {
      findings.push(`${id} (${resource.Type}): no such resource type`);
      continue;
    }
    checked[resource.Type] = (checked[resource.Type] ?? 0) + 1;
    for (const problem of checkObject(definition.properties, resource.Properties ?? {}, '')) findings.push(`${id} (${resource.Type}): ${problem}`);
  }
  return { findings, checked, custom };
}

function isIntrinsic(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && (keys[0] === 'Ref' || keys[0]!.startsWith('Fn::'));
}

function checkObject(properties: Record<string, Property>, value: unknown, path: string): string[] {
  if (isIntrinsic(value)) return [];
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [`${path || '(properties)'}: expected an object`];
  const problems: string[] = [];
  const given = value as Record<string, unknown>;
  for (const [name, property] of Object.entries(properties)) {
    if (property.required && given[name] === undefined) problems.push(`${path}${name}: required`);
  }
  for (const [name, item] of Object.entries(given)) {
    const property = properties[name];
    if (!property) {
      problems.push(`${path}${name}: no such property`);
      continue;
    }
    // A type CloudFormation once had for the property still deploys.
    const types = [property.type, ...(property.previousTypes ?? [])];
    const attempts = types.map((type) => checkValue(type, item, `${path}${name}`));
    if (!attempts.some((attempt) => attempt.length === 0)) problems.push(...attempts[0]!);
  }
  return problems;
}

function checkValue(type: PropertyType, value: unknown, path: string): string[] {

  if (isIntrinsic(value)) return [];
  switch (type.type) {
    case 'string':
      if (typeof value !== 'string' && typeof value !== 'number') return [`${path}: expected a string, got ${JSON.stringify(value)}`];
      if (type.allowedValues && !type.allowedValues.includes(String(value))) return [`${path}: ${JSON.stringify(value)} is not one of ${type.allowedValues.join(', ')}`];
      return [];
    case 'number':
    case 'integer':
      return typeof value === 'number' || (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value)) ? [] : [`${path}: expected a number, got ${JSON.stringify(value)}`];
    case 'boolean':
      return typeof value === 'boolean' || value === 'true' || value === 'false' ? [] : [`${path}: expected a boolean, got ${JSON.stringify(value)}`];
    case 'json':
    case 'tag':
      return [];
    case 'date-time':
      return typeof value === 'string' ? [] : [`${path}: expected a date-time string`];
    case 'null':
      return value === null ? [] : [`${path}: expected null`];
    case 'array':
      if (!Array.isArray(value)) return [`${path}: expected a list, got ${JSON.stringify(value)}`];
      return value.flatMap((item, index) => checkValue(type.element, item, `${path}[${index}]`));
    case 'map':
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return [`${path}: expected a map`];
      return Object.entries(value).flatMap(([key, item]) => checkValue(type.element, item, `${path}.${key}`));
    case 'union': {
      const attempts = type.types.map((candidate: PropertyType) => checkValue(candidate, value, path));
      return attempts.some((attempt: string[]) => attempt.length === 0) ? [] : attempts[0]!;
    }
    case 'ref':
      return checkObject(spec().get('typeDefinition', type.reference).properties, value, `${path}.`);
    default:
      return [`${path}: a kind of value this check does not know (${JSON.stringify(type)})`];
  }
}
