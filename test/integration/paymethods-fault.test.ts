import { GenerateDataKeyCommand, GenerateMacCommand, KMSClient } from '@aws-sdk/client-kms';
import { DynamoDBDocumentClient, GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, MERCHANT, useRuntimeEnvironment } from '../support/api.ts';
import { lambdaContext, proxyEvent } from '../support/lambda-event.ts';
import { CARD, CARD_NUMBER, customerPath, unique } from '../support/paymethods.ts';

/**
 * In-process: the real create handler with DynamoDB failing on the write.
 * KMS answers normally, so encryption happens first; the one transactional
 * write then fails and nothing may be left behind.
 */
describe('create when DynamoDB fails after encryption', () => {
  beforeAll(() => {
    useRuntimeEnvironment();
  });

  const dynamo = mockClient(DynamoDBDocumentClient);
  const kms = mockClient(KMSClient);
  afterEach(() => {
    dynamo.restore();
    kms.restore();
  });

  it('answers 503 with Retry-After and stores nothing', async () => {
    dynamo.on(GetCommand).resolves({});
    const throttled = Object.assign(new Error('Throughput exceeds the current capacity'), { name: 'ProvisionedThroughputExceededException', $metadata: { httpStatusCode: 400 } });
    dynamo.on(TransactWriteCommand).rejects(throttled);
    kms.on(GenerateMacCommand).resolves({ Mac: new Uint8Array(32).fill(3) });
    kms.on(GenerateDataKeyCommand).resolves({ Plaintext: new Uint8Array(32).fill(7), CiphertextBlob: new Uint8Array(64).fill(1), KeyId: 'arn:aws:kms:us-east-1:000000000000:key/test' });

    const { handler } = await import('#functions/paymethods-create-customer.ts');
    const loc = unique('loc_');
    const cst = unique('cst_');
    const path = customerPath(MERCHANT.organizationId, loc, cst);
    const result = await handler(
      proxyEvent({
        method: 'POST',
        resource: '/v3/organizations/{organization_id}/locations/{location_id}/customers/{customer_token}/paymethods',
        path,
        pathParameters: { organization_id: MERCHANT.organizationId, location_id: loc, customer_token: cst },
        body: { card: CARD },
        organizationId: MERCHANT.organizationId,
      }),
      lambdaContext('paymethods-create-customer') as Parameters<typeof handler>[1],
    );

    expect(result.statusCode).toBe(503);
    expect(result.headers?.['Retry-After']).toBe('1');
    expect(JSON.parse(result.body).response.response_code).toBe('SERVICE_UNAVAILABLE');
    expect(result.body).not.toContain(CARD_NUMBER);
    expect(kms.commandCalls(GenerateDataKeyCommand)).toHaveLength(1); // sealed before the write
    expect(dynamo.commandCalls(TransactWriteCommand)).toHaveLength(1); // the only write, and it is atomic
    expect(dynamo.commandCalls(PutCommand)).toHaveLength(0);
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(0);

    dynamo.restore();
    kms.restore();
    const list = await call(path);
    expect(list.status).toBe(200);
    expect(list.body.number_results).toBe(0);
  });
});
