import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteDefinition } from '#shared/http/routes.ts';
import { DYNAMODB_GATE_REFUSAL } from '../../local/dynamodb-gate.ts';
import type { LocalRuntime } from '../../local/runtime.ts';
import { startLocalRuntime } from '../../local/runtime.ts';

/**
 * The local runtime refuses a function's DynamoDB call its grants do not
 * allow, as IAM refuses it in AWS: the probe's route may write idempotency records only,
 * and its handler writes through the service's own client, unaware of the gate.
 */
const probe: RouteDefinition = {
  handler: 'gate-probe',
  method: 'GET',
  path: '/v3/probe',
  auth: 'none',
  access: { table: 'write', writes: ['idempotency'] },
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
  it('lets a function write the item kinds its route declares and refuses others, a transaction whole, with AccessDeniedException', async () => {
    const response = await fetch(`${runtime.url}/v3/probe`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ declared: 'written', paymethod: 'AccessDeniedException', transaction: 'AccessDeniedException', transaction_item_written: false });
    const refusals = logged.filter((line) => line.message === DYNAMODB_GATE_REFUSAL);
    expect(refusals.map((line) => [line.function, line.action])).toEqual([
      ['gate-probe', 'PutItem'],
      ['gate-probe', 'PutItem'],
    ]);
  });
});
