import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { allItemsOf, itemsOf } from '#shared/store/partition.ts';

describe('a whole partition, page by page', () => {
  it('follows LastEvaluatedKey to the last page, in the order asked, on the index named', async () => {
    const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
    const dynamo = mockClient(client);
    dynamo
      .on(QueryCommand)
      .resolvesOnce({ Items: [{ sk: 'c' }, { sk: 'b' }], LastEvaluatedKey: { pk: 'p', sk: 'b' } })
      .resolvesOnce({ Items: [], LastEvaluatedKey: { pk: 'p', sk: 'b' } })
      .resolvesOnce({ Items: [{ sk: 'a' }] });
    const items = await allItemsOf(client, { tableName: 't', indexName: 'gsi2', keyAttribute: 'gsi2pk', key: 'CRD#org_1', order: 'descending' });
    expect(items).toEqual([{ sk: 'c' }, { sk: 'b' }, { sk: 'a' }]);
    const inputs = dynamo.commandCalls(QueryCommand).map((call) => call.args[0].input);
    expect(inputs).toHaveLength(3);
    expect(inputs[0]).toEqual({ TableName: 't', IndexName: 'gsi2', KeyConditionExpression: '#pk = :pk', ExpressionAttributeNames: { '#pk': 'gsi2pk' }, ExpressionAttributeValues: { ':pk': 'CRD#org_1' }, ScanIndexForward: false });
    // An empty page with a key is not the end: DynamoDB may stop a page early.
    expect(inputs.slice(1).map((input) => input.ExclusiveStartKey)).toEqual([{ pk: 'p', sk: 'b' }, { pk: 'p', sk: 'b' }]);
  });

  it('reads the table itself when no index is named, and stops reading when its reader stops', async () => {
    const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
    const dynamo = mockClient(client);
    dynamo.on(QueryCommand).resolves({ Items: [{ sk: '1' }, { sk: '2' }], LastEvaluatedKey: { pk: 'p', sk: '2' } });
    for await (const item of itemsOf(client, { tableName: 't', keyAttribute: 'pk', key: 'AUHIST#org_1#2026-05#S0', order: 'ascending' })) {
      expect(item).toEqual({ sk: '1' });
      break;
    }
    const [input] = dynamo.commandCalls(QueryCommand).map((call) => call.args[0].input);
    expect(dynamo.commandCalls(QueryCommand)).toHaveLength(1);
    expect(input).not.toHaveProperty('IndexName');
    expect(input?.ScanIndexForward).toBe(true);
  });
});
