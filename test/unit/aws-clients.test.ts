import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { CallBudget } from '#shared/aws/client-config.ts';
import { DYNAMODB_BUDGET, EVENTBRIDGE_BUDGET, KMS_BUDGET, S3_BUDGET, SECRETS_MANAGER_BUDGET, awsClient, withoutSdkLogger } from '#shared/aws/client-config.ts';
import { dynamo } from '#shared/aws/dynamodb.ts';
import { eventBridge } from '#shared/aws/eventbridge.ts';
import { kms } from '#shared/aws/kms.ts';
import { s3 } from '#shared/aws/s3.ts';

interface BuiltClient {
  middlewareStack: { identify(): string[] };
  config: { maxAttempts(): Promise<number>; requestHandler: unknown };
}
const middlewareNames = (client: BuiltClient) => client.middlewareStack.identify().map((entry) => entry.split(' - ')[0]);

describe("the service's AWS clients", () => {
  it.each([
    ['DynamoDB (the document client shares the base client stack)', dynamo, DYNAMODB_BUDGET],
    ['S3', s3, S3_BUDGET],
    ['KMS', kms, KMS_BUDGET],
    ['EventBridge', eventBridge, EVENTBRIDGE_BUDGET],
    // PayPal's credentials client is built on first use, the same way (shared/aws/paypal.ts).
    ['Secrets Manager', awsClient(SecretsManagerClient, 'Secrets Manager', SECRETS_MANAGER_BUDGET), SECRETS_MANAGER_BUDGET],
  ] as const)('%s: its budget, the request deadline on every attempt, X-Ray subsegments, no SDK logger middleware', async (_name, client, budget: CallBudget) => {
    const built = client as unknown as BuiltClient;
    const names = middlewareNames(built);
    expect(names).not.toContain('loggerMiddleware');
    expect(names).toContain('xrayTracing');
    expect(names).toContain('retryMiddleware');
    // After the retry middleware, so that it bounds every attempt.
    expect(names.indexOf('requestDeadline')).toBeGreaterThan(names.indexOf('retryMiddleware'));
    expect(await built.config.maxAttempts()).toBe(budget.maxAttempts);
    const handler = built.config.requestHandler as { configProvider?: Promise<Record<string, unknown>> };
    expect(await handler.configProvider).toMatchObject({ connectionTimeout: budget.connectionTimeoutMs, socketTimeout: budget.socketTimeoutMs, requestTimeout: budget.requestTimeoutMs });
  });

  it('without the logger middleware the SDK never builds a redacted copy of a call for its logger', async () => {
    const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
    const options = { region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } };
    // A logger that records: with the middleware, every call reaches it; without, none does.
    const calls = (client: InstanceType<typeof DynamoDBClient>, seen: unknown[]) => {
      // DynamoDB's answer to GetItem, without a network: the call ends here.
      client.middlewareStack.add(() => async () => ({ output: { $metadata: {} }, response: {} }), { step: 'finalizeRequest', name: 'answer' });
      return client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'x' } } })).then(() => seen);
    };
    const logged: unknown[] = [];
    const logger = { debug() {}, info: (entry: unknown) => logged.push(entry), warn() {}, error() {} };
    expect(await calls(new DynamoDBClient({ ...options, logger }), logged)).toHaveLength(1);
    const quiet: unknown[] = [];
    expect(await calls(withoutSdkLogger(new DynamoDBClient({ ...options, logger: { ...logger, info: (entry: unknown) => quiet.push(entry) } })), quiet)).toHaveLength(0);
  });
});
