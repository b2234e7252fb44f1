import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteDefinition } from '#shared/platform/routes.ts';
import type { ApiGatewayEmulator } from '../../local/api-gateway.ts';
import { startApiGatewayEmulator } from '../../local/api-gateway.ts';
import { functionAccesses, functionContainers } from '../../local/runtime.ts';
import { runInContainer } from '#shared/runtime/container.ts';

/**
 * Each handler runs with exactly the variables CDK would give its function,
 * derived from its route's declared access: the same code reading the vault
 * key works behind a route that declares vault access and fails behind one
 * that does not, even after the first has run in the same process, and even
 * when the process environment holds the value.
 */
const routes: RouteDefinition[] = [
  { handler: 'vault-key', method: 'GET', path: '/v3/granted', auth: 'none', access: { table: 'read', vault: ['encrypt'] }, summary: 'declares vault access' },
  { handler: 'vault-key-undeclared', method: 'GET', path: '/v3/undeclared', auth: 'none', access: { table: 'read' }, summary: 'declares none' },
];
/** Only its container is looked at: a route that declares PayPal access. */
const paypalRoute: RouteDefinition = { handler: 'paypal-create', method: 'POST', path: '/v3/paypal', auth: 'none', access: { table: 'write', writes: ['paymethod'], paypal: true }, summary: 'declares PayPal access' };
const resources = {
  tableName: 'payments-test',
  auHistoryTableName: 'payments-test-au-history',
  webhookTableName: 'payments-test-webhooks',
  vaultKeyId: 'arn:aws:kms:us-east-1:000000000000:key/vault',
  documentsBucket: 'documents-test',
  credentialMacKeyId: 'arn:aws:kms:us-east-1:000000000000:key/mac',
  fingerprintKeyId: 'arn:aws:kms:us-east-1:000000000000:key/fingerprint',
  reportsBucket: 'reports-test',
  eventBusName: 'events-test',
  webhookDeliveryQueueUrl: 'http://127.0.0.1:9/000000000000/webhook-delivery-test',
  paypal: { apiUrl: 'http://127.0.0.1:9', credentials: { secretArn: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:PaypalCredentials-AbC123' } },
};
const containers = functionContainers({ accesses: functionAccesses([...routes, paypalRoute], []), platformEnvironment: { ENVIRONMENT_NAME: 'local' }, resources });

let emulator: ApiGatewayEmulator;
const logged: Array<Record<string, unknown>> = [];
beforeAll(async () => {
  process.env.VAULT_KEY_ID = 'from-the-process-environment';
  emulator = await startApiGatewayEmulator({
    routes,
    functionsDir: path.resolve(import.meta.dirname, '../fixtures/functions'),
    invokeAs: (name, invoke) => runInContainer(containers.get(name)!, invoke),
    port: 0,
    host: '127.0.0.1',
    stage: 'local',
    binaryMediaTypes: [],
    authorizerHandler: 'authorizer',
    authorizerCacheTtlSeconds: 0,
    log: (line) => logged.push(line),
  });
});
afterAll(async () => {
  delete process.env.VAULT_KEY_ID;
  await emulator.close();
});

describe('per-function environment in the local runtime', () => {
  it('gives each function only the variables its access declares', () => {
    expect(containers.get('vault-key')?.environment).toMatchObject({ TABLE_NAME: resources.tableName, VAULT_KEY_ID: resources.vaultKeyId });
    expect(containers.get('vault-key-undeclared')?.environment).not.toHaveProperty('VAULT_KEY_ID');
    expect(containers.get('vault-key-undeclared')?.environment).not.toHaveProperty('PAYPAL_API_URL');
    // PayPal access: the API base and the credentials' secret, as the stack gives it; never the credentials themselves.
    expect(containers.get('paypal-create')?.environment).toMatchObject({ PAYPAL_API_URL: resources.paypal.apiUrl, PAYPAL_SECRET_ARN: resources.paypal.credentials.secretArn });
    expect(Object.keys(containers.get('paypal-create')?.environment ?? {}).filter((name) => name.startsWith('PAYPAL_')).sort()).toEqual(['PAYPAL_API_URL', 'PAYPAL_SECRET_ARN']);
    expect(containers.get('vault-key')?.environment).not.toHaveProperty('PAYPAL_SECRET_ARN');
    // The authorizer gets the credential HMAC key and nothing of the vault.
    expect(containers.get('authorizer')?.environment).toMatchObject({ CREDENTIAL_MAC_KEY_ID: resources.credentialMacKeyId });
    expect(containers.get('authorizer')?.environment).not.toHaveProperty('VAULT_KEY_ID');
    // Functions outside the route table get what the stack gives them.
    expect(containers.get('events-publish')?.environment).toMatchObject({ EVENT_BUS_NAME: resources.eventBusName });
    expect(containers.get('events-publish')?.environment).not.toHaveProperty('VAULT_KEY_ID');
    expect(containers.get('au-chunk')?.environment).toMatchObject({ REPORTS_BUCKET: resources.reportsBucket, VAULT_KEY_ID: resources.vaultKeyId });
    expect(containers.get('au-merge')?.environment).not.toHaveProperty('VAULT_KEY_ID');
    // Only the functions that write or read the history get its table.
    expect(containers.get('au-chunk')?.environment).toMatchObject({ AU_HISTORY_TABLE_NAME: resources.auHistoryTableName });
    expect(containers.get('au-export')?.environment).toMatchObject({ AU_HISTORY_TABLE_NAME: resources.auHistoryTableName });
    expect(containers.get('au-merge')?.environment).not.toHaveProperty('AU_HISTORY_TABLE_NAME');
    expect(containers.get('vault-key')?.environment).not.toHaveProperty('AU_HISTORY_TABLE_NAME');
    // Only the webhook delivery functions get the deliveries table.
    for (const name of ['webhooks-fanout', 'webhooks-send']) expect(containers.get(name)?.environment, name).toMatchObject({ WEBHOOK_TABLE_NAME: resources.webhookTableName });
    expect(containers.get('events-publish')?.environment).not.toHaveProperty('WEBHOOK_TABLE_NAME');
    expect(containers.get('vault-key')?.environment).not.toHaveProperty('WEBHOOK_TABLE_NAME');
  });

  it('fails a handler whose route lacks the grant, as Lambda would', async () => {
    const granted = await fetch(`${emulator.url}/v3/granted`);
    expect(granted.status).toBe(200);
    expect(await granted.text()).toBe(resources.vaultKeyId);

    const undeclared = await fetch(`${emulator.url}/v3/undeclared`);
    expect(undeclared.status).toBe(500);
    expect(logged.map((line) => line.error)).toContain('Error: Missing required environment variable VAULT_KEY_ID');
  });
});
