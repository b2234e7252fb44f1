/**
 * What a first `cdk deploy` into a fresh account trips over, each pinned on
 * the synthesized template: key policies that name roles, a state machine log
 * group outside /aws/vendedlogs/, alarms that reach nobody, service principals
 * without a source condition, a restore runbook the policies refuse,
 * reservations Lambda refuses, and access logs that can be altered.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { STATE_MACHINE_LOG_GROUP_PREFIX } from '#infra/account-updater.ts';
import { API_TRACE_SAMPLING } from '#infra/tracing.ts';
import { UNRESERVED_CONCURRENCY_MINIMUM, environmentSettings } from '#infra/environments.ts';
import type { PaymentsApiStack } from '#infra/stack.ts';
import { fixtureRoutes } from './fixtures/routes.ts';
import { ACCOUNT, REGION, decide, render } from './policy-evaluation.ts';
import type { PolicyRequest } from './policy-evaluation.ts';
import { bucketId, keyGrantsTheKeyIgnores, keyIdByDescription, keyPolicyStatements, principalArnCondition, resourcesOfType, settings, synthesize } from './template-helpers.ts';
import type { Statement } from './template-helpers.ts';

const functionsDir = fileURLToPath(new URL('./fixtures/functions', import.meta.url));
const fixtures = { routes: fixtureRoutes, functionsDir };
const SYNTH_TIMEOUT_MS = 120_000;
const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: { environments: Record<string, Record<string, unknown>> } };

const policyStatements = (template: Template, type: string, documentKey: string): Array<[string, Statement[]]> =>
  Object.entries(resourcesOfType(template, type)).map(([id, resource]) => [id, (resource.Properties[documentKey] as { Statement: Statement[] }).Statement]);

describe('a first deploy (fixture routes)', () => {
  let dev: Template;
  let prod: Template;
  let prodStack: PaymentsApiStack;
  beforeAll(() => {
    dev = synthesize(settings('dev'), fixtures);
    prod = synthesize(settings('prod', { alarms: { ...settings('prod').alarms, email: undefined } }), fixtures, (stack) => { prodStack = stack; });
  }, SYNTH_TIMEOUT_MS);

  it('names no role as a key policy principal: roles are their account plus aws:PrincipalArn, so KMS never checks a role that does not exist yet', () => {
    for (const [keyId, statements] of policyStatements(dev, 'AWS::KMS::Key', 'KeyPolicy')) {
      for (const statement of statements) {
        const principals = [(statement.Principal as { AWS?: unknown } | undefined)?.AWS ?? []].flat();
        for (const principal of principals) {
          expect(JSON.stringify(principal), `${keyId} ${statement.Sid ?? ''}`).not.toMatch(/"Fn::GetAtt":\["[A-Za-z0-9]+","Arn"\]|:role\//);
        }
      }
      // A usage statement for one role: its ARN by condition, never the role itself.
      const byRole = statements.filter((statement) => principalArnCondition(statement) !== undefined);
      for (const statement of byRole) expect(JSON.stringify(render(dev, statement.Principal))).toBe(JSON.stringify({ AWS: `arn:aws:iam::${ACCOUNT}:root` }));
    }
    expect(policyStatements(dev, 'AWS::KMS::Key', 'KeyPolicy').flatMap(([, statements]) => statements).filter((statement) => principalArnCondition(statement) !== undefined).length).toBeGreaterThan(10);
    // And every identity grant still has its key policy statement.
    expect(keyGrantsTheKeyIgnores(dev)).toEqual([]);
  });

  it('names the state machine log group under /aws/vendedlogs/states/, so its delivery needs no logs resource policy entry', () => {
    const machine = Object.values(resourcesOfType(dev, 'AWS::StepFunctions::StateMachine'))[0]!;
    const destination = JSON.stringify((machine.Properties.LoggingConfiguration as { Destinations: unknown[] }).Destinations);
    const [logGroupId] = /"Fn::GetAtt":\["([A-Za-z0-9]+)","Arn"\]/.exec(destination)!.slice(1);
    expect(resourcesOfType(dev, 'AWS::Logs::LogGroup')[logGroupId!]!.Properties.LogGroupName).toBe(`${STATE_MACHINE_LOG_GROUP_PREFIX}payments-dev-account-updater`);
    expect(STATE_MACHINE_LOG_GROUP_PREFIX).toBe('/aws/vendedlogs/states/');
  });

  it('warns at synth when alarms are on and reach nobody, and not when they have an address or are off', () => {
    // Nested stacks' warnings are metadata of their constructs (the CLI prints them all).
    const warnings = (stack: PaymentsApiStack) => stack.node.findAll()
      .flatMap((construct) => construct.node.metadata)
      .filter((entry) => entry.type === 'aws:cdk:warning' && String(entry.data).includes('alarm topic has no subscriber'));
    expect(warnings(prodStack)).toHaveLength(1);
    let withEmail: PaymentsApiStack | undefined;
    synthesize(settings('prod', { alarms: { ...settings('prod').alarms, email: 'oncall@example.com' } }), fixtures, (stack) => { withEmail = stack; });
    expect(warnings(withEmail!)).toHaveLength(0);
    let devStack: PaymentsApiStack | undefined;
    synthesize(settings('dev'), fixtures, (stack) => { devStack = stack; });
    expect(warnings(devStack!)).toHaveLength(0);
  }, SYNTH_TIMEOUT_MS);

  it('limits every service principal of a key, topic or bucket policy to this account (aws:SourceAccount or aws:SourceArn)', () => {
    const documents = [
      ...policyStatements(prod, 'AWS::KMS::Key', 'KeyPolicy'),
      ...policyStatements(prod, 'AWS::SNS::TopicPolicy', 'PolicyDocument'),
      ...policyStatements(prod, 'AWS::S3::BucketPolicy', 'PolicyDocument'),
    ];
    const serviceOf = (statement: Statement) => (statement.Principal as { Service?: unknown } | undefined)?.Service;
    const sourceCondition = /aws:SourceAccount|aws:SourceArn/;
    const services = documents.flatMap(([id, statements]) => statements
      .filter((statement) => (statement.Effect ?? 'Allow') === 'Allow' && serviceOf(statement) !== undefined)
      .map((statement) => ({
        id,
        sid: statement.Sid,
        service: serviceOf(statement),
        // Its own condition, or a Deny of the same document refusing that service for any other source.
        condition: JSON.stringify(statement.Condition ?? {})
          + statements.filter((deny) => deny.Effect === 'Deny' && serviceOf(deny) === serviceOf(statement)).map((deny) => JSON.stringify(deny.Condition ?? {})).join(''),
      })));
    expect(services.map(({ service }) => service)).toEqual(expect.arrayContaining(['cloudwatch.amazonaws.com', 'delivery.logs.amazonaws.com', 'logging.s3.amazonaws.com']));
    for (const { id, sid, service, condition } of services) expect(condition, `${id} ${sid ?? ''} ${String(service)}`).toMatch(sourceCondition);
    // The alarm topic key: only this account's alarms.
    const topicKey = keyPolicyStatements(prod, keyIdByDescription(prod, 'alarm topic')).find((statement) => statement.Sid === 'CloudWatchAlarmsPublish')!;
    expect(render(prod, topicKey.Condition)).toEqual({
      StringEquals: { 'aws:SourceAccount': ACCOUNT },
      ArnLike: { 'aws:SourceArn': `arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:*` },
    });
  });

  describe('the documents restore runbook (docs/operations.md), as an operator role of the account', () => {
    const operator = `arn:aws:iam::${ACCOUNT}:role/payments-operator`;
    const runbook = (): string[] => {
      const doc = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
      const block = /<!-- restore-runbook -->\s*```sh\n([\s\S]*?)```/.exec(doc)?.[1];
      if (!block) throw new Error('docs/operations.md has no restore-runbook block');
      return block.split('\n').map((line) => line.trim()).filter((line) => line.startsWith('aws '));
    };
    /** What each command asks of S3 and, through S3, of KMS (the bucket's objects are encrypted with the vault key). */
    const requestsOf = (template: Template, command: string): Array<PolicyRequest & { service: 's3' | 'kms' }> => {
      const bucket = `arn:aws:s3:::${bucketId(template, 'documents')}`;
      const object = `${bucket}/documents/org_1/doc_1`;
      const s3 = (action: string, resource: string, context: Record<string, string> = {}) => ({ service: 's3' as const, principalArn: operator, action, resource, context: { 'aws:SecureTransport': 'true', 's3:TlsVersion': '1.3', ...context } });
      const kms = (action: string) => ({ service: 'kms' as const, principalArn: operator, action, resource: `arn:aws:kms:${REGION}:${ACCOUNT}:key/vault`, context: { 'kms:ViaService': `s3.${REGION}.amazonaws.com` } });
      const [, , operation] = command.split(/\s+/);
      const versioned = command.includes('--version-id') || command.includes('versionId=');
      switch (operation) {
        case 'list-object-versions': return [s3('s3:ListBucketVersions', bucket)];
        case 'delete-object': return [s3(versioned ? 's3:DeleteObjectVersion' : 's3:DeleteObject', object)];
        case 'get-object': return [s3(versioned ? 's3:GetObjectVersion' : 's3:GetObject', object), kms('kms:Decrypt')];
        case 'copy-object': return [s3(versioned ? 's3:GetObjectVersion' : 's3:GetObject', object), s3('s3:PutObject', object), kms('kms:Decrypt'), kms('kms:GenerateDataKey')];
        default: throw new Error(`Add what "${command}" asks of S3 and KMS to this test`);
      }
    };
    /** Why each request fails: a Deny of the bucket policy, or (KMS) no key policy statement that allows the operator. */
    const refusals = (template: Template, commands: readonly string[]): string[] => {
      const bucketPolicy = render(template, policyStatements(template, 'AWS::S3::BucketPolicy', 'PolicyDocument')
        .find(([, statements]) => JSON.stringify(statements).includes(`"${bucketId(template, 'documents')}"`))![1]) as Statement[];
      const keyPolicy = render(template, keyPolicyStatements(template, keyIdByDescription(template, 'account-number data keys'))) as Statement[];
      return commands.flatMap((command) => requestsOf(template, command).flatMap((request) => {
        const decision = decide(request.service === 's3' ? bucketPolicy : keyPolicy, request);
        // S3 in the same account: the operator's IAM policy allows unless the bucket policy denies. KMS: only the key policy counts.
        const refused = request.service === 's3' ? decision === 'denied' : decision !== 'allowed';
        return refused ? [`${command.split(/\s+/)[2]}: ${request.action} ${decision}`] : [];
      }));
    };

    it('documents commands that each policy lets through', () => {
      expect(runbook()).toHaveLength(3);
      expect(refusals(prod, runbook())).toEqual([]);
      expect(refusals(dev, runbook())).toEqual([]);
    });

    it('would catch the copy-object runbook it replaced: KMS refuses the operator the vault key', () => {
      const copy = ['aws s3api copy-object --bucket <DocumentsBucketName> --key documents/<org>/<document> --copy-source <DocumentsBucketName>/documents/<org>/<document>?versionId=<VersionId>'];
      expect(refusals(prod, copy)).toEqual(['copy-object: kms:Decrypt not allowed', 'copy-object: kms:GenerateDataKey not allowed']);
    });

    it('would catch a bucket policy that denies the restore', () => {
      const denyingDeletes = structuredClone(prod.toJSON()) as { Resources: Record<string, { Type: string; Properties: { PolicyDocument: { Statement: Statement[] } } }> };
      for (const resource of Object.values(denyingDeletes.Resources).filter((candidate) => candidate.Type === 'AWS::S3::BucketPolicy')) {
        resource.Properties.PolicyDocument.Statement.push({ Effect: 'Deny', Principal: '*', Action: 's3:DeleteObjectVersion', Resource: '*' });
      }
      const planted = { toJSON: () => denyingDeletes, findResources: (type: string) => Object.fromEntries(Object.entries(denyingDeletes.Resources).filter(([, resource]) => resource.Type === type)) } as unknown as Template;
      expect(refusals(planted, runbook())).toEqual(['delete-object: s3:DeleteObjectVersion denied', 'delete-object: s3:DeleteObjectVersion denied']);
    });
  });

  it('keeps the access logs unalterable: replicated to an Object Lock archive for the log retention, no early expiry of old versions', () => {
    for (const [template, mode, days] of [[dev, 'GOVERNANCE', 14], [prod, 'COMPLIANCE', 365]] as const) {
      const buckets = resourcesOfType(template, 'AWS::S3::Bucket');
      const logs = buckets[bucketId(template, 'access-logs')]!.Properties;
      const archiveId = bucketId(template, 'log-archive');
      const archive = buckets[archiveId]!.Properties;
      expect(archive.ObjectLockConfiguration).toEqual({ ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: mode, Days: days } } });
      const replication = logs.ReplicationConfiguration as { Rules: Array<{ Destination: { Bucket: unknown }; Status: string; DeleteMarkerReplication?: { Status: string } }> };
      expect(replication.Rules).toHaveLength(1);
      expect(replication.Rules[0]).toMatchObject({ Status: 'Enabled', Destination: { Bucket: { 'Fn::GetAtt': [archiveId, 'Arn'] } }, DeleteMarkerReplication: { Status: 'Disabled' } });
      for (const bucket of [logs, archive]) {
        for (const rule of (bucket.LifecycleConfiguration as { Rules: Array<{ ExpirationInDays?: number; NoncurrentVersionExpiration?: { NoncurrentDays: number } }> }).Rules) {
          expect(rule.ExpirationInDays).toBe(days);
          expect(rule.NoncurrentVersionExpiration?.NoncurrentDays).toBe(days);
        }
      }
    }
  });
});

describe('docs/operations.md, "Log retention and trace sampling"', () => {
  const doc = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Log retention and trace sampling'), doc.indexOf('## Observability'));
  const rows = (header: string) => {
    const lines = section.slice(section.indexOf(header)).split('\n').slice(2);
    return lines.slice(0, lines.findIndex((line) => !line.startsWith('|'))).map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim()));
  };
  const number = (cell: string) => Number(cell.replace(/[$,]|GB|KB|M$/g, '').trim());
  const { dev: devDays, prod: prodDays } = Object.fromEntries(['dev', 'prod'].map((name) => [name, (cdkJson.context.environments[name] as { logRetentionDays: number }).logRetentionDays]));
  const requestsPerSecond = Number(/\*\*(\d+) requests per second\*\*/.exec(section)![1]);
  const secondsAMonth = 30 * 24 * 3600;

  it('states the design load and recomputes every log figure from it', () => {
    expect(section).toContain(`${(requestsPerSecond * secondsAMonth) / 1e6} M requests`);
    const logRows = rows('| Kind |');
    expect(logRows.map(([kind]) => kind)).toEqual(['Function logs (routes and authorizer)', 'API access logs', 'WAF logs (where `webAcl` is on)']);
    for (const [kind, retention, perRequest, ingested, ingestion, stored, storage] of logRows) {
      expect(retention, kind).toBe(`${devDays} / ${prodDays}`);
      const gigabytes = (requestsPerSecond * secondsAMonth * number(perRequest!) * 1000) / 1e9;
      expect(number(ingested!), kind).toBeCloseTo(gigabytes, 2);
      expect(ingestion, kind).toBe(`$${(gigabytes * 0.5).toFixed(2)}`);
      expect(number(stored!), kind).toBeCloseTo((gigabytes * prodDays!) / 30, 2);
      expect(storage, kind).toBe(`$${(((gigabytes * prodDays!) / 30) * 0.03).toFixed(2)}`);
    }
  });

  it('recomputes the traces from the sampling rule of the template', () => {
    const [[, sampling, atLoad, cost]] = rows('| Traces |') as [[string, string, string, string]];
    expect(sampling).toBe(`rule \`payments-api-<environment>\`: ${API_TRACE_SAMPLING.reservoirPerSecond} request a second, then ${API_TRACE_SAMPLING.fixedRate * 100}%`);
    const perSecond = API_TRACE_SAMPLING.reservoirPerSecond + API_TRACE_SAMPLING.fixedRate * (requestsPerSecond - API_TRACE_SAMPLING.reservoirPerSecond);
    const millions = (perSecond * secondsAMonth) / 1e6;
    expect(atLoad).toBe(`${API_TRACE_SAMPLING.reservoirPerSecond} + ${API_TRACE_SAMPLING.fixedRate} × ${requestsPerSecond - API_TRACE_SAMPLING.reservoirPerSecond} = ${perSecond} traces a second: ${millions.toFixed(2)} M`);
    expect(cost).toBe(`$${(millions * 5).toFixed(2)}`);
  });

  it('matches the template: one retention for every log group, the access and WAF groups among them, and the API sampling rule', () => {
    for (const [name, days] of [['dev', devDays], ['prod', prodDays]] as const) {
      const template = synthesize(settings(name), fixtures);
      const groups = resourcesOfType(template, 'AWS::Logs::LogGroup');
      expect(Object.values(groups).map((group) => group.Properties.RetentionInDays)).toEqual(Object.values(groups).map(() => days));
      const stage = Object.values(resourcesOfType(template, 'AWS::ApiGateway::Stage'))[0]!;
      // The destination's ARN names the group (by Ref, without the wildcard suffix).
      const accessGroup = /":log-group:",\{"Ref":"([A-Za-z0-9]+)"\}/.exec(JSON.stringify(stage.Properties.AccessLogSetting))![1]!;
      expect(groups[accessGroup]!.Properties.RetentionInDays).toBe(days);
      const waf = Object.values(groups).filter((group) => String(group.Properties.LogGroupName).startsWith('aws-waf-logs-'));
      expect(waf.map((group) => group.Properties.RetentionInDays)).toEqual(name === 'prod' ? [days] : []);
      const [rule] = Object.values(resourcesOfType(template, 'AWS::XRay::SamplingRule'));
      expect(rule!.Properties.SamplingRule).toMatchObject({ RuleName: `payments-api-${name}`, ReservoirSize: API_TRACE_SAMPLING.reservoirPerSecond, FixedRate: API_TRACE_SAMPLING.fixedRate, ServiceType: 'AWS::ApiGateway::Stage' });
    }
  }, SYNTH_TIMEOUT_MS);
});

describe('reserved concurrency against the account quota', () => {
  const withReservations = (reservedConcurrency: Record<string, number>, accountConcurrencyLimit?: number) =>
    environmentSettings('dev', { dev: { ...cdkJson.context.environments.dev, reservedConcurrency, ...(accountConcurrencyLimit ? { accountConcurrencyLimit } : {}) } });

  it(`refuses reservations that leave fewer than ${UNRESERVED_CONCURRENCY_MINIMUM} of the stated quota unreserved`, () => {
    expect(withReservations({ 'paymethods-create': 450, authorizer: 450 }).accountConcurrencyLimit).toBe(1000);
    expect(() => withReservations({ 'paymethods-create': 451, authorizer: 450 })).toThrow(/reserves 901 of the account's 1000 \(accountConcurrencyLimit\), leaving 99 unreserved/);
    expect(withReservations({ 'paymethods-create': 2900 }, 3000).reservedConcurrency).toEqual({ 'paymethods-create': 2900 });
    expect(() => withReservations({}, 99)).toThrow(/accountConcurrencyLimit/);
  });
});
