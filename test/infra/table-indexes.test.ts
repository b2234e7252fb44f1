import { App } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import type { Template } from 'aws-cdk-lib/assertions';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PaymentsApiStack } from '#infra/stack.ts';
import { tableIndexes } from '#infra/table-indexes.ts';
import { GLOBAL_SECONDARY_INDEXES, RETIRED_INDEXES } from '#shared/platform/table.ts';
import { fixtureRoutes } from './fixtures/routes.ts';
import { deployedTemplate, settings } from './template-helpers.ts';

const functionsDir = fileURLToPath(new URL('./fixtures/functions', import.meta.url));
const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };
const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');

const CURRENT = GLOBAL_SECONDARY_INDEXES.map((index) => index.indexName);

type Deploy = { withheld?: string; backfilling?: string; retained?: string };

/**
 * The deploys docs/operations.md ("Upgrading: indexes") gives under one
 * heading, as the context each passes.
 */
function documentedDeploys(heading: string): Deploy[] {
  const section = operations.slice(operations.indexOf(heading), operations.indexOf('\n### ', operations.indexOf(heading) + 1));
  return [...section.matchAll(/`npx cdk deploy -c environment=prod([^`]*)`/g)].map(([, flags]) => ({
    withheld: /-c withheldIndexes=(\S+)/.exec(flags!)?.[1],
    backfilling: /-c backfillingIndexes=(\S+)/.exec(flags!)?.[1],
    retained: /-c retainedIndexes=(\S+)/.exec(flags!)?.[1],
  }));
}

/**
 * Follows deploys from a table's indexes as CloudFormation would: each may
 * create or delete one index; no deploy reads an index it creates (DynamoDB
 * is still filling it), one the table lacks, or leaves a list unread; and no
 * deploy deletes an index the deploy before read (the old functions still
 * run while the table changes). `window` names indexes whose lists the
 * documentation lets answer 500 while they are built. Answers the indexes
 * the table ends with.
 */
function followDeploys(from: string[], deploys: Deploy[], window: string[] = []): string[] {
  let table = [...from].sort();
  let previousReads: readonly string[] = from;
  for (const [step, context] of deploys.entries()) {
    const at = `step ${step + 1}: ${JSON.stringify(context)}`;
    const next = tableIndexes(context);
    const names = next.indexes.map((index) => index.indexName).sort();
    const created = names.filter((name) => !table.includes(name));
    const deleted = table.filter((name) => !names.includes(name));
    expect(created.length + deleted.length, at).toBeLessThanOrEqual(1);
    expect(next.read.filter((name) => !names.includes(name) || created.includes(name)).filter((name) => !window.includes(name)), at).toEqual([]);
    expect(next.unserved.filter((name) => !window.includes(name)), at).toEqual([]);
    expect(deleted.filter((name) => previousReads.includes(name)), at).toEqual([]);
    table = names;
    previousReads = next.read;
  }
  return table;
}

describe('the table indexes of one deploy', () => {
  it('are the current ones, read as they are, unless an upgrade says otherwise', () => {
    expect(tableIndexes({})).toEqual({ indexes: GLOBAL_SECONDARY_INDEXES, standIns: '', read: CURRENT, unserved: [] });
  });

  it('withhold current indexes, hold back reads of backfilling ones and retain retired ones, reading a retained index in place of its successor', () => {
    const upgrading = tableIndexes({ withheld: 'gsi11,gsi13', backfilling: 'gsi12', retained: 'gsi4,gsi5,gsi6,gsi7' });
    expect(upgrading.indexes.map((index) => index.indexName)).toEqual(['gsi1', 'gsi2', 'gsi3', 'gsi8', 'gsi9', 'gsi10', 'gsi12', 'gsi4', 'gsi5', 'gsi6', 'gsi7']);
    expect(upgrading.standIns).toBe('gsi11=gsi5,gsi12=gsi6,gsi13=gsi7');
    expect(upgrading.read).toEqual(['gsi1', 'gsi2', 'gsi3', 'gsi8', 'gsi9', 'gsi10', 'gsi5', 'gsi6', 'gsi7']);
    expect(upgrading.unserved).toEqual([]);
    expect(upgrading.indexes.find((index) => index.indexName === 'gsi5')).toEqual({ indexName: 'gsi5', partitionKey: 'gsi5pk', sortKey: 'gsi5sk', projection: 'ALL' });
    // A withheld or backfilling index with nothing retained in its place: its lists would have no index.
    expect(tableIndexes({ withheld: 'gsi13' }).unserved).toEqual(['gsi13']);
    expect(tableIndexes({ backfilling: 'gsi8', retained: 'gsi4' }).unserved).toEqual(['gsi8']);
    // Lists as cdk.json would hold them read the same as the command line's comma-separated values.
    expect(tableIndexes({ withheld: ['gsi11', 'gsi13'], backfilling: ['gsi12'], retained: ['gsi4', 'gsi5', 'gsi6', 'gsi7'] })).toEqual(upgrading);
  });

  it('refuse names that are not indexes to withhold, hold back or retain (a typo would delete, keep or read the wrong one)', () => {
    expect(() => tableIndexes({ withheld: 'gsi4' })).toThrow(/withheldIndexes: gsi4/);
    expect(() => tableIndexes({ retained: 'gsi10' })).toThrow(/retainedIndexes: gsi10/);
    expect(() => tableIndexes({ withheld: 'gsi 9' })).toThrow(/withheldIndexes/);
    expect(() => tableIndexes({ backfilling: 'gsi5' })).toThrow(/backfillingIndexes: gsi5/);
    expect(() => tableIndexes({ withheld: 'gsi10', backfilling: 'gsi10' })).toThrow(/backfillingIndexes: gsi10/);
  });

  it('follow the documented upgrade from the release before gsi10 to gsi13: one index a deploy, every list served throughout', () => {
    const previousRelease = [...CURRENT.filter((name) => !RETIRED_INDEXES.some((retired) => retired.successor === name)), ...RETIRED_INDEXES.map((retired) => retired.indexName)];
    const deploys = documentedDeploys('### From the release before gsi10 to gsi13');
    expect(deploys).toHaveLength(9);
    expect(followDeploys(previousRelease, deploys)).toEqual([...CURRENT].sort());
  });

  it('follow the documented upgrade from a stack before gsi8 and gsi9, then the release after', () => {
    const beforeLists = ['gsi1', 'gsi2', 'gsi3', 'gsi4', 'gsi5', 'gsi6', 'gsi7'];
    const deploys = [...documentedDeploys('### From a stack before gsi8/gsi9'), ...documentedDeploys('### From the release before gsi10 to gsi13')];
    expect(deploys).toHaveLength(11);
    // The list indexes have nothing to stand in for them: the documented maintenance window.
    expect(followDeploys(beforeLists, deploys, ['gsi8', 'gsi9'])).toEqual([...CURRENT].sort());
  });

  it('would catch a deploy that reads an index it creates, or deletes one the deploy before read', () => {
    const previousRelease = ['gsi1', 'gsi2', 'gsi3', 'gsi4', 'gsi5', 'gsi6', 'gsi7', 'gsi8', 'gsi9'];
    expect(() => followDeploys(previousRelease, [{ retained: 'gsi4,gsi5,gsi6,gsi7', withheld: 'gsi11,gsi12,gsi13' }])).toThrow();
    const created = [...CURRENT, 'gsi4', 'gsi5', 'gsi6', 'gsi7'];
    expect(() => followDeploys(created, [{ retained: 'gsi4,gsi5,gsi6,gsi7', backfilling: 'gsi10,gsi11,gsi12,gsi13' }, { retained: 'gsi5,gsi6,gsi7' }])).toThrow();
  });
});

describe('a stack synthesized for an upgrade', () => {
  const synthesize = (context: Record<string, string>) => {
    const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], ...context } });
    return new PaymentsApiStack(app, 'PaymentsApi-dev', { environment: settings('dev'), routes: fixtureRoutes, functionsDir });
  };
  const standInsOf = (template: Template) =>
    Object.values(template.findResources('AWS::Lambda::Function')).map(
      (fn) => (fn as { Properties: { Environment?: { Variables?: Record<string, unknown> } } }).Properties.Environment?.Variables?.TABLE_INDEX_STAND_INS,
    );

  it('keeps the retained indexes, grants Query on them, and tells the functions bound to the table which stand in', () => {
    const stack = synthesize({ withheldIndexes: 'gsi12,gsi13', backfillingIndexes: 'gsi11', retainedIndexes: 'gsi4,gsi5,gsi6,gsi7' });
    const template = deployedTemplate(stack);
    const [table] = Object.values(template.findResources('AWS::DynamoDB::Table', { Properties: { StreamSpecification: {} } })) as Array<{ Properties: { GlobalSecondaryIndexes: Array<{ IndexName: string; Projection: { ProjectionType: string } }> } }>;
    expect(table!.Properties.GlobalSecondaryIndexes.map((index) => index.IndexName)).toEqual(['gsi1', 'gsi2', 'gsi3', 'gsi8', 'gsi9', 'gsi10', 'gsi11', 'gsi4', 'gsi5', 'gsi6', 'gsi7']);
    expect(table!.Properties.GlobalSecondaryIndexes.find((index) => index.IndexName === 'gsi6')!.Projection.ProjectionType).toBe('ALL');

    const standIns = standInsOf(template);
    expect(standIns).toContain('gsi11=gsi5,gsi12=gsi6,gsi13=gsi7');
    // Every function bound to the table gets it, as one set of variables goes with the table.
    const tableReaders = Object.values(template.findResources('AWS::Lambda::Function')).filter((fn) => (fn as { Properties: { Environment?: { Variables?: Record<string, unknown> } } }).Properties.Environment?.Variables?.TABLE_NAME);
    expect(tableReaders.length).toBeGreaterThan(5);
    for (const fn of tableReaders) expect(JSON.stringify(fn)).toContain('"TABLE_INDEX_STAND_INS":"gsi11=gsi5,gsi12=gsi6,gsi13=gsi7"');

    const policies = JSON.stringify(template.findResources('AWS::IAM::Policy'));
    for (const name of ['gsi4', 'gsi7', 'gsi11']) expect(policies).toContain(`/index/${name}`);
    expect(policies).not.toContain('/index/gsi12');
    expect(Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('withheld'))).toEqual([]);
  }, 120_000);

  it('sets no stand-ins at all when nothing is withheld, and warns when a withheld index has nothing in its place', () => {
    expect(standInsOf(deployedTemplate(synthesize({}))).filter(Boolean)).toEqual([]);
    const unserved = synthesize({ withheldIndexes: 'gsi13' });
    expect(Annotations.fromStack(unserved).findWarning('*', Match.stringLikeRegexp('gsi13 is withheld or backfilling and no index it replaces is retained'))).toHaveLength(1);
  }, 120_000);
});
