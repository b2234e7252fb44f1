import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { App, Aspects } from 'aws-cdk-lib';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { environmentSettings } from '#infra/environments.ts';
import type { EnvironmentSettings } from '#infra/environments.ts';
import { PaymentsApiStack } from '#infra/stack.ts';
import type { PaymentsApiStackProps } from '#infra/stack.ts';
import { fixtureRoutes } from './fixtures/routes.ts';

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };
const functionsDir = fileURLToPath(new URL('./fixtures/functions', import.meta.url));

/** AwsSolutions findings left after the stack's suppressions, as `path: rule[finding]`. */
function unsuppressedFindings(name: string, props: Omit<PaymentsApiStackProps, 'environment'>, overrides: Partial<EnvironmentSettings> = {}, extend?: (stack: PaymentsApiStack) => void): string[] {
  // Findings are read from the annotations below; the flag that turns error annotations into a failed synth is off here.
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], '@aws-cdk/core:annotationsInValidationReport': false } });
  const environment = { ...environmentSettings(name, cdkJson.context.environments), ...overrides };
  const stack = new PaymentsApiStack(app, `PaymentsApi-${name}`, { environment, ...props });
  extend?.(stack);
  Aspects.of(stack).add(new AwsSolutionsChecks());
  app.synth();
  const annotations = Annotations.fromStack(stack);
  return [
    ...annotations.findError('*', Match.stringLikeRegexp('AwsSolutions-.*')),
    ...annotations.findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*')),
  ].map((finding) => `${finding.id}: ${String(finding.entry.data).split(': ')[0]}`);
}

describe('cdk-nag AwsSolutions over the nested stacks', () => {
  it('reports a finding in a nested stack on the top-level stack, so a clean run covers them', () => {
    // A queue without a dead-letter queue or TLS-only policy, in the API's nested stack and in the Account Updater's.
    const findings = unsuppressedFindings('dev', { routes: fixtureRoutes, functionsDir }, {}, (stack) => {
      new Queue(stack.api, 'Unchecked');
      new Queue(stack.accountUpdater, 'Unchecked');
    });
    expect(findings.filter((finding) => finding.includes('/ApiStack/Api/Unchecked/')).length).toBeGreaterThan(0);
    expect(findings.filter((finding) => finding.includes('/AccountUpdaterStack/AccountUpdater/Unchecked/')).length).toBeGreaterThan(0);
  }, 120_000);
});

// The fixture route table has every access kind, a public route and a binary route; the real one is what ships.
describe.each([
  ['dev', 'the real route table', {}],
  ['prod', 'the real route table', {}],
  ['dev', 'the fixture routes', { routes: fixtureRoutes, functionsDir }],
  ['prod', 'the fixture routes', { routes: fixtureRoutes, functionsDir }],
] as const)('cdk-nag AwsSolutions (%s, %s)', (name, _routes, props) => {
  it('leaves no unsuppressed error or warning', () => {
    expect(unsuppressedFindings(name, props)).toEqual([]);
  }, 120_000);
});

describe('cdk-nag AwsSolutions (dev, the fixture routes, roles outside the stack on the reports bucket)', () => {
  it('leaves no unsuppressed error or warning', () => {
    const outsideRoles = {
      reportsInboxWriters: ['arn:aws:iam::111122223333:role/card-network-delivery'],
      reportsReaders: ['arn:aws:iam::123456789012:role/finance-reports'],
    };
    expect(unsuppressedFindings('dev', { routes: fixtureRoutes, functionsDir }, outsideRoles)).toEqual([]);
  }, 120_000);
});
