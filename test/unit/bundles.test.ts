import { describe, expect, it } from 'vitest';
import { buildFunction, functionNames } from '../../bench/function-bundles.ts';
import type { FunctionBundle } from '../../bench/function-bundles.ts';
import type { RouteAccess } from '#shared/platform/routes.ts';
import { routes } from '#shared/platform/routes.ts';
import { hashesRequests } from '#shared/platform/key-grants.ts';
import { WEBHOOK_QUEUE_GRANTS } from '#shared/platform/webhooks.ts';

// Built as `cdk synth` builds them (infra/bundling.ts), once per file.
const built = new Map<string, Promise<FunctionBundle>>();
function bundleOf(name: string): Promise<FunctionBundle> {
  if (!built.has(name)) built.set(name, buildFunction(name));
  return built.get(name) as Promise<FunctionBundle>;
}

/** The SDK clients a route's declared access may need: anything more is cold-start weight it never uses. */
function clientsFor(handler: string, access: RouteAccess): string[] {
  return [
    ...(access.table ? ['@aws-sdk/client-dynamodb'] : []),
    // The vault, fingerprints, and the keyed hash of Idempotency-Key requests.
    ...(access.vault || access.fingerprint || hashesRequests(access) ? ['@aws-sdk/client-kms'] : []),
    ...(access.documents ? ['@aws-sdk/client-s3'] : []),
    ...(access.paypal ? ['@aws-sdk/client-secrets-manager'] : []),
    // Ping and recover enqueue what they stored: their queue grants are in the webhook manifest, not the route's access.
    ...(WEBHOOK_QUEUE_GRANTS[handler] ? ['@aws-sdk/client-sqs'] : []),
  ];
}

// Cold starts grow with the bundle: a function must not carry what only other functions use.
describe('function bundles', () => {
  it.each(['paymethods-get', 'paymethods-list-organization', 'paymethods-delete', 'onetimetokens-get', 'documents-get', 'documents-list'])(
    '%s bundles neither zod (validation and OpenAPI schemas) nor the KMS client',
    async (handler) => {
      const { packages } = await bundleOf(handler);
      expect(packages.has('zod')).toBe(false);
      expect(packages.has('@aws-sdk/client-kms')).toBe(false);
    },
    120_000,
  );

  it.each(routes.map((route) => [route.handler, route] as const))(
    '%s loads only the SDK clients its declared access needs (public routes without storage load none)',
    async (_handler, route) => {
      const { sdkClients } = await bundleOf(route.handler);
      expect(sdkClients.filter((client) => !clientsFor(route.handler, route.access).includes(client))).toEqual([]);
    },
    120_000,
  );

  it.each(functionNames())(
    '%s carries neither the X-Ray SDK nor Powertools: logs, EMF metrics and traces are written by shared/log and shared/observability',
    async (name) => {
      const { packages } = await bundleOf(name);
      expect([...packages].filter((pkg) => pkg.startsWith('@aws-lambda-powertools/') || pkg.startsWith('aws-xray-sdk'))).toEqual([]);
    },
    120_000,
  );

  // docs/account-updater.md: "exceljs makes the export's bundle about 1.5 MiB".
  it('only the monthly export carries exceljs, and its bundle is the 1.5 MiB the guide states', async () => {
    const exported = await bundleOf('au-export');
    expect(exported.packages.has('exceljs')).toBe(true);
    expect(Math.round((exported.bytes / 1024 / 1024) * 10) / 10).toBe(1.5);
    for (const name of functionNames().filter((name) => name !== 'au-export')) expect((await bundleOf(name)).packages.has('exceljs'), name).toBe(false);
  }, 300_000);

  it('the event publisher bundles no zod, no KMS client and no DynamoDB client: it only reads what the stream hands it', async () => {
    const { packages } = await bundleOf('events-publish');
    for (const name of ['zod', '@aws-sdk/client-kms', '@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb', '@aws-sdk/client-s3']) expect(packages.has(name), name).toBe(false);
    expect(packages.has('@aws-sdk/client-eventbridge')).toBe(true);
  }, 60_000);

  it.each(['openapi-get', 'tokenize-js'])(
    '%s serves static text: it bundles no zod, no OpenAPI generator and no AWS SDK package at all',
    async (name) => {
      const bundle = await bundleOf(name);
      expect([...bundle.packages].filter((pkg) => pkg === 'zod' || pkg.startsWith('@aws-sdk/') || pkg.startsWith('@smithy/'))).toEqual([]);
      expect(bundle.code).not.toContain('toJSONSchema');
    },
    120_000,
  );

  it('the read routes of paymethods bundle no S3 client either', async () => {
    expect((await bundleOf('paymethods-get')).packages.has('@aws-sdk/client-s3')).toBe(false);
  }, 60_000);
});
