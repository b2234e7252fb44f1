/**
 * Every template `cdk synth` writes (the environment's stack, each nested
 * stack, the account-settings stack), in dev and prod, checked against the
 * CloudFormation registry schemas (test/infra/template-schema.ts).
 */
import { App, NestedStack, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { definePaymentsApp } from '#infra/payments-app.ts';
import { validateTemplate } from './template-schema.ts';

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };
const SYNTH_TIMEOUT_MS = 120_000;

type Json = { Resources?: Record<string, { Type: string; Properties?: Record<string, unknown> }> };

/** Each stack's template, nested ones included, by path: what CloudFormation receives. */
function templatesOf(environment: string): Map<string, Json> {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], environment } });
  definePaymentsApp(app);
  const stacks = app.node.findAll().filter((construct): construct is Stack => Stack.isStack(construct));
  return new Map(stacks.map((stack) => [NestedStack.isNestedStack(stack) ? stack.node.path : stack.stackName, Template.fromStack(stack).toJSON() as Json]));
}

describe('CloudFormation resource schemas', () => {
  for (const environment of ['dev', 'prod']) {
    it(`accepts every resource of every ${environment} template`, () => {
      const templates = templatesOf(environment);
      let checked = 0;
      for (const [name, template] of templates) {
        const report = validateTemplate(template);
        expect(report.findings, name).toEqual([]);
        checked += Object.values(report.checked).reduce((sum, count) => sum + count, 0);
      }
      expect(templates.size).toBeGreaterThanOrEqual(6);
      expect(checked).toBeGreaterThan(250);
    }, SYNTH_TIMEOUT_MS);
  }

  it('finds a misspelt property, a missing required one, a wrong kind of value and an unknown type', () => {
    const planted: Json = {
      Resources: {
        Bucket: { Type: 'AWS::S3::Bucket', Properties: { VersioningConfiguration: { Status: 'On' }, BucketEncrytpion: {} } },
        Topic: { Type: 'AWS::SNS::Topic', Properties: { FifoTopic: 'yes' } },
        Queue: { Type: 'AWS::SQS::Queue', Properties: { MessageRetentionPeriod: 'a week' } },
        Function: { Type: 'AWS::Lambda::Function', Properties: { Role: { 'Fn::GetAtt': ['Role', 'Arn'] } } },
        Thing: { Type: 'AWS::S3::Bukket', Properties: {} },
      },
    };
    expect(validateTemplate(planted).findings).toEqual([
      'Bucket (AWS::S3::Bucket): VersioningConfiguration.Status: "On" is not one of Enabled, Suspended',
      'Bucket (AWS::S3::Bucket): BucketEncrytpion: no such property',
      'Topic (AWS::SNS::Topic): FifoTopic: expected a boolean, got "yes"',
      'Queue (AWS::SQS::Queue): MessageRetentionPeriod: expected a number, got "a week"',
      'Function (AWS::Lambda::Function): Code: required',
      'Thing (AWS::S3::Bukket): no such resource type',
    ]);
  });
});
