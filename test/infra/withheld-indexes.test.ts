import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PaymentsApiStack } from '#infra/stack.ts';
import { GLOBAL_SECONDARY_INDEXES } from '#shared/store/table.ts';
import { fixtureRoutes } from './fixtures/routes.ts';
import { settings } from './template-helpers.ts';

const functionsDir = fileURLToPath(new URL('./fixtures/functions', import.meta.url));
const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };

/**
 * CloudFormation creates one GSI per stack update, so a stack that predates
 * gsi8 and gsi9 is upgraded with `-c withheldIndexes=gsi9` first
 * (docs/operations.md, "Upgrading: paymethod list indexes").
 */
describe('withheldIndexes', () => {
  it('leaves the named indexes out of the table, and only those', () => {
    const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], withheldIndexes: 'gsi9' } });
    const stack = new PaymentsApiStack(app, 'PaymentsApi-dev', { environment: settings('dev'), routes: fixtureRoutes, functionsDir });
    const [table] = Object.values(Template.fromStack(stack).findResources('AWS::DynamoDB::Table')) as Array<{ Properties: { GlobalSecondaryIndexes: Array<{ IndexName: string }> } }>;
    expect(table!.Properties.GlobalSecondaryIndexes.map((index) => index.IndexName)).toEqual(GLOBAL_SECONDARY_INDEXES.map((index) => index.indexName).filter((name) => name !== 'gsi9'));
  }, 120_000);
});
