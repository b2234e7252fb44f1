import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteDefinition } from '#shared/platform/routes.ts';
import { REFUSED_CALL } from '../../local/function-identity.ts';
import type { LocalRuntime } from '../../local/runtime.ts';
import { startLocalRuntime } from '../../local/runtime.ts';

/**
 * The local runtime refuses a function's DynamoDB, KMS and S3 calls its grants
 * do not allow, as IAM refuses them in AWS: the probe's route may write
 * idempotency records only, seal with the vault key only, hash requests with
 * the request-hash key (not the fingerprint key), and write and read
 * documents only (not list the bucket, nor delete), and its handler calls through ordinary SDK clients, unaware of any of it.
 */
const probe: RouteDefinition = {
  handler: 'grants-probe',
  method: 'GET',
  path: '/v3/probe',
  auth: 'none',
  access: { table: 'write', writes: ['idempotency'], vault: ['encrypt'], documents: ['write', 'read'] },
  summary: 'writes a declared and an undeclared item kind',
};

let runtime: LocalRuntime;
const logged: Array<Record<string, unknown>> = [];
beforeAll(async () => {
  runtime = await startLocalRuntime({
    port: 0,
    routes: [probe],
    s3Triggers: [],
    functionsDir: path.resolve(import.meta.dirname, '../fixtures/functions'),
    log: (line) => logged.push(line),
  });
}, 240_000);
afterAll(async () => {
  await runtime?.close();
});

describe('DynamoDB grants in the local runtime', () => {
  it('lets a function write the item kinds, use the keys and touch the objects its route declares, and refuses the rest (a transaction whole) as AWS does', async () => {
    const response = await fetch(`${runtime.url}/v3/probe`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      declared: 'written',
      paymethod: 'AccessDeniedException',
      transaction: 'AccessDeniedException',
      transaction_item_written: false,
      seal: 'written',
      seal_without_context: 'AccessDeniedException',
      open: 'AccessDeniedException',
      // Keeping Idempotency-Key records brings the request-hash key, never a way to derive a fingerprint key.
      mac_request_hash: 'written',
      mac_fingerprint: 'AccessDeniedException',
      write: 'written',
      write_uploads: 'AccessDenied',
      // Not NoSuchKey: a function that may not list the bucket learns nothing of which keys exist.
      read_missing: 'AccessDenied',
      delete: 'AccessDenied',
    });
    const refusals = logged.filter((line) => line.message === REFUSED_CALL);
    expect(refusals.map((line) => [line.service, line.function, line.action])).toEqual([
      ['dynamodb', 'grants-probe', 'PutItem'],
      ['dynamodb', 'grants-probe', 'PutItem'],
      ['kms', 'grants-probe', 'GenerateDataKey'],
      ['kms', 'grants-probe', 'Decrypt'],
      ['kms', 'grants-probe', 'GenerateMac'],
      ['s3', 'grants-probe', 'PutObject'],
      ['s3', 'grants-probe', 'DeleteObject'],
    ]);
  });
});
