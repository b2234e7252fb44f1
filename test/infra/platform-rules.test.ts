/**
 * The platform group's rules (infra/platform-rules.ts) on the app `cdk synth`
 * defines, and a planted breach of each kind in a throwaway stack.
 */
import { App, Aspects, Stack } from 'aws-cdk-lib';
import { AnyPrincipal, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption, CfnBucket } from 'aws-cdk-lib/aws-s3';
import type { IConstruct } from 'constructs';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { definePaymentsApp } from '#infra/payments-app.ts';
import { PLATFORM_RULES, PlatformRules, exemptFromRule } from '#infra/platform-rules.ts';

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };
const SYNTH_TIMEOUT_MS = 120_000;

/** `<path>: <message>` of every error annotation under `scope`, after synthesis (when Aspects have run). */
function errors(app: App, scope: IConstruct = app): string[] {
  app.synth();
  return scope.node.findAll().flatMap((construct) => construct.node.metadata
    .filter((entry) => entry.type === 'aws:cdk:error')
    .map((entry) => `${construct.node.path}: ${String(entry.data)}`));
}

describe('platform rules', () => {
  it('covers each kind: encryption, public access, logging, retention', () => {
    expect([...new Set(PLATFORM_RULES.map((rule) => rule.kind))].sort()).toEqual(['encryption', 'logging', 'public-access', 'retention']);
  });

  for (const environment of ['dev', 'prod']) {
    it(`passes the ${environment} app as cdk synth defines it`, () => {
      const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], environment } });
      definePaymentsApp(app);
      expect(errors(app)).toEqual([]);
    }, SYNTH_TIMEOUT_MS);
  }

  describe('a planted breach of each kind', () => {
    const planted = () => {
      const app = new App();
      const stack = new Stack(app, 'Planted');
      Aspects.of(app).add(new PlatformRules());
      return { app, stack };
    };

    it('encryption: a bucket without default encryption', () => {
      const { app, stack } = planted();
      new CfnBucket(stack, 'Plain', {
        publicAccessBlockConfiguration: { blockPublicAcls: true, blockPublicPolicy: true, ignorePublicAcls: true, restrictPublicBuckets: true },
        loggingConfiguration: { destinationBucketName: 'logs' },
      });
      expect(errors(app)).toEqual([expect.stringMatching(/^Planted\/Plain: \[ENC-S3\] encryption: /)]);
    });

    it('public access: a bucket policy that allows anyone', () => {
      const { app, stack } = planted();
      const bucket = new Bucket(stack, 'Open', { encryption: BucketEncryption.S3_MANAGED, blockPublicAccess: BlockPublicAccess.BLOCK_ALL, serverAccessLogsPrefix: 'self/' });
      bucket.addToResourcePolicy(new PolicyStatement({ principals: [new AnyPrincipal()], actions: ['s3:GetObject'], resources: [bucket.arnForObjects('*')] }));
      expect(errors(app)).toEqual([expect.stringMatching(/^Planted\/Open\/Policy\/Resource: \[PUB-S3-POLICY\] public-access: /)]);
    });

    it('logging: a function that logs to a group Lambda creates', () => {
      const { app, stack } = planted();
      const role = new Role(stack, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
      new CfnFunction(stack, 'Unlogged', { role: role.roleArn, code: { zipFile: 'exports.handler = async () => 1' }, handler: 'index.handler', runtime: 'nodejs24.x' });
      expect(errors(app)).toEqual([expect.stringMatching(/^Planted\/Unlogged: \[LOG-LAMBDA\] logging: /)]);
    });

    it('retention: a log group kept forever', () => {
      const { app, stack } = planted();
      new LogGroup(stack, 'Forever', { retention: RetentionDays.INFINITE });
      expect(errors(app)).toEqual([expect.stringMatching(/^Planted\/Forever\/Resource: \[RET-LOGS\] retention: /)]);
    });

    it('lets an exemption with a reason through, and refuses one without', () => {
      const { app, stack } = planted();
      const group = new LogGroup(stack, 'Forever', { retention: RetentionDays.INFINITE });
      exemptFromRule(group, 'RET-LOGS', 'An audit trail a regulator asks to keep without end.');
      expect(errors(app)).toEqual([]);
      expect(() => exemptFromRule(group, 'RET-LOGS', 'because')).toThrow(/needs a reason/);
      expect(() => exemptFromRule(group, 'RET-NOPE', 'An audit trail a regulator asks to keep without end.')).toThrow(/No platform rule RET-NOPE/);
    });
  });
});
