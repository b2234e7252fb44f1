import { DeleteTableCommand, DescribeTableCommand, DynamoDBClient, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { GLOBAL_SECONDARY_INDEXES, RETIRED_INDEXES } from '#shared/platform/table.ts';
import { ensureTable } from '../../local/provision.ts';
import { useRuntimeEnvironment } from '../support/api.ts';
import { createTableWithIndexes } from '../support/tables.ts';

/**
 * A table kept in LOCAL_DATA_DIR by an earlier version of `npm start` is
 * brought to the current indexes when the runtime starts: the missing ones
 * created, the retired ones deleted, on DynamoDB Local itself.
 */
describe('a local table from before gsi10 to gsi13', () => {
  useRuntimeEnvironment();
  const client = new DynamoDBClient({});
  const tableName = `upgrade-${randomUUID()}`;
  afterAll(async () => {
    await client.send(new DeleteTableCommand({ TableName: tableName }));
  });

  it('gets the narrow indexes and loses the ALL ones they replace', async () => {
    // The layout of the release before: gsi1 to gsi9, gsi4 to gsi7 projecting ALL.
    const before = [...GLOBAL_SECONDARY_INDEXES.filter((index) => !RETIRED_INDEXES.some((retired) => retired.successor === index.indexName)), ...RETIRED_INDEXES];
    await createTableWithIndexes(client, tableName, before);

    // A card the Account Updater changed, stored before: its entries under gsi4 and gsi7.
    const item = { pk: { S: 'MTH#mth_upgrade' }, sk: { S: 'MTH' }, paymethod_token: { S: 'mth_upgrade' }, paymethod_type: { S: 'card' }, gsi4pk: { S: 'AU#org_1#S3' }, gsi4sk: { S: '2026-05-01T00:00:00.000Z#mth_upgrade' }, gsi7pk: { S: 'FP#org_1#fp_1' }, gsi7sk: { S: '2026-01-01T00:00:00.000Z#mth_upgrade' }, card: { M: { expire_year: { N: '2031' } } } };
    await client.send(new PutItemCommand({ TableName: tableName, Item: item }));

    await ensureTable(client, tableName);

    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const indexes = (Table?.GlobalSecondaryIndexes ?? []).map((index) => ({ status: index.IndexStatus, name: index.IndexName, projection: index.Projection?.ProjectionType, included: index.Projection?.NonKeyAttributes }));
    expect(indexes.map((index) => `${index.name} ${index.status}`).sort()).toEqual(GLOBAL_SECONDARY_INDEXES.map((index) => `${index.indexName} ACTIVE`).sort());
    for (const index of GLOBAL_SECONDARY_INDEXES) {
      const found = indexes.find((candidate) => candidate.name === index.indexName)!;
      expect(found.projection, index.indexName).toBe(index.projection === 'ALL' ? 'ALL' : 'INCLUDE');
      if (index.projection !== 'ALL') expect([...(found.included ?? [])].sort(), index.indexName).toEqual([...index.projection].sort());
    }
    // Filled from the items as they were: the card is in the new report and fingerprint indexes, without what they do not carry.
    for (const [indexName, key, value] of [['gsi10', 'gsi4pk', 'AU#org_1#S3'], ['gsi13', 'gsi7pk', 'FP#org_1#fp_1']] as const) {
      const { Items } = await client.send(new QueryCommand({ TableName: tableName, IndexName: indexName, KeyConditionExpression: '#key = :value', ExpressionAttributeNames: { '#key': key }, ExpressionAttributeValues: { ':value': { S: value } } }));
      expect(Items?.map((entry) => entry.paymethod_token?.S), indexName).toEqual(['mth_upgrade']);
      expect(Items?.[0], indexName).not.toHaveProperty('card');
    }
  });
});
