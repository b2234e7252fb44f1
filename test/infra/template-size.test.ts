/**
 * CloudFormation takes at most 500 resources and 1 MB (uploaded through S3) per
 * template, each nested stack's counted on its own. Every template `cdk synth`
 * writes, for dev and prod, must stay well inside both (at most 400 resources
 * and 800 KB), so a round of new routes, queues or alarms fails here, with room
 * left to split a stack, rather than at deploy time.
 */
import { App } from 'aws-cdk-lib';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { definePaymentsApp } from '#infra/payments-app.ts';

const MAX_RESOURCES = 400;
const MAX_TEMPLATE_BYTES = 800 * 1024;

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };
const outdirs: string[] = [];

interface TemplateFigures { readonly file: string; readonly resources: number; readonly bytes: number }

/**
 * Every template of the cloud assembly `cdk synth -c environment=<name>` writes
 * (top-level and nested), as the CLI writes them: with the construct path of
 * every resource and the CDK metadata resource, which count towards the limits.
 */
function synthesizedTemplates(environment: string): TemplateFigures[] {
  const outdir = mkdtempSync(join(tmpdir(), 'template-size-'));
  outdirs.push(outdir);
  const app = new App({
    outdir,
    context: { ...cdkJson.context, environment, 'aws:cdk:bundling-stacks': [], 'aws:cdk:enable-path-metadata': true, 'aws:cdk:version-reporting': true },
  });
  definePaymentsApp(app);
  app.synth();
  return readdirSync(outdir).filter((file) => file.endsWith('.template.json')).map((file) => {
    const text = readFileSync(join(outdir, file));
    return { file, resources: Object.keys((JSON.parse(text.toString('utf8')) as { Resources: object }).Resources).length, bytes: text.length };
  });
}

/** The templates over either limit, as `<file>: <resources> resources, <bytes> bytes`. */
function oversized(templates: readonly TemplateFigures[], limits = { resources: MAX_RESOURCES, bytes: MAX_TEMPLATE_BYTES }): string[] {
  return templates.filter(({ resources, bytes }) => resources > limits.resources || bytes > limits.bytes).map(({ file, resources, bytes }) => `${file}: ${resources} resources, ${bytes} bytes`);
}

describe('docs/operations.md', () => {
  it('states the limits this test keeps', () => {
    const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    expect(operations).toContain(`at most ${MAX_RESOURCES} resources and ${MAX_TEMPLATE_BYTES / 1024} KB`);
    expect(operations).toContain('five nested stacks');
  });
});

afterAll(() => {
  for (const outdir of outdirs) rmSync(outdir, { recursive: true, force: true });
});

describe.each(['dev', 'prod'])('templates of %s', (environment) => {
  const templates = synthesizedTemplates(environment);

  it('are the account stack, the environment stack and its five nested stacks', () => {
    expect(templates.map(({ file }) => file.replace(/[0-9A-F]{8}\.nested/, '.nested')).sort()).toEqual([
      'PaymentsApi-account.template.json',
      `PaymentsApi-${environment}.template.json`,
      `PaymentsApi${environment}AccountUpdaterStack.nested.template.json`,
      `PaymentsApi${environment}ApiStack.nested.template.json`,
      `PaymentsApi${environment}MonitoringStack.nested.template.json`,
      `PaymentsApi${environment}TriggersStack.nested.template.json`,
      `PaymentsApi${environment}WebhooksStack.nested.template.json`,
    ]);
  });

  it(`each hold at most ${MAX_RESOURCES} resources and ${MAX_TEMPLATE_BYTES / 1024} KB`, () => {
    expect(oversized(templates)).toEqual([]);
    // The check itself: with the limits at the largest template's figures less one, that template is reported.
    const largest = templates.toSorted((a, b) => b.resources - a.resources)[0]!;
    expect(oversized(templates, { resources: largest.resources - 1, bytes: MAX_TEMPLATE_BYTES })).toContain(`${largest.file}: ${largest.resources} resources, ${largest.bytes} bytes`);
    const heaviest = templates.toSorted((a, b) => b.bytes - a.bytes)[0]!;
    expect(oversized(templates, { resources: MAX_RESOURCES, bytes: heaviest.bytes - 1 })).toContain(`${heaviest.file}: ${heaviest.resources} resources, ${heaviest.bytes} bytes`);
  });
});
