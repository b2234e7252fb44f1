import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { withoutSdkLogger } from '#shared/aws/client-config.ts';
import { dynamo } from '#shared/aws/dynamodb.ts';
import { eventBridge } from '#shared/aws/eventbridge.ts';
import { kms } from '#shared/aws/kms.ts';
import { s3 } from '#shared/aws/s3.ts';

const middlewareNames = (client: { middlewareStack: { identify(): string[] } }) => client.middlewareStack.identify().map((entry) => entry.split(' - ')[0]);

describe("the service's AWS clients", () => {
  it.each([
    ['DynamoDB (the document client shares the base client stack)', dynamo, true],
    ['S3', s3, true],
    ['KMS', kms, true],
    ['EventBridge', eventBridge, false],
  ] as const)('%s: no SDK logger middleware; the request deadline where the client has a budget', (_name, client, deadline) => {
    const names = middlewareNames(client);
    expect(names).not.toContain('loggerMiddleware');
    expect(names.includes('requestDeadline')).toBe(deadline);
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
