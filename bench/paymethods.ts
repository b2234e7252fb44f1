/**
 * Paymethods benchmark: `npx tsx bench/paymethods.ts`.
 *
 * Starts the local runtime in this process (DynamoDB Local, KMS stand-in,
 * API Gateway emulator, real handlers), then measures, each next to the bare
 * DynamoDB/KMS calls the operation needs, run from the same process:
 *   - create (card, customer path), get, and a 50-record list page: median latency;
 *   - KMS calls per create (the stand-in's call counter);
 *   - read capacity consumed by a 50-record page.
 * Numbers are local (DynamoDB Local on the JVM, everything on one machine):
 * compare the columns with each other, not with AWS.
 */
import { randomBytes } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { startLocalRuntime } from '#local/runtime.ts';
import { recordRun } from './results.ts';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 40);
const ORG = 'org_bench';
const CARD = { card_type: 'visa', name_on_card: 'Bench Card', account_number: '4111111111111111', expire_month: 12, expire_year: 2031 };

const runtime = await startLocalRuntime({
  port: 0,
  seed: { organizations: [{ organization_id: ORG, credentials: [{ api_access_id: 'bench-id', api_secure_key: 'bench-key' }] }] },
});
const env = runtime.handlerEnvironment;
const clientConfig = { region: 'us-east-1', credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID as string, secretAccessKey: env.AWS_SECRET_ACCESS_KEY as string } };
const dynamo = DynamoDBDocumentClient.from(new DynamoDBClient({ ...clientConfig, endpoint: env.AWS_ENDPOINT_URL_DYNAMODB }));
const kms = new KMSClient({ ...clientConfig, endpoint: env.AWS_ENDPOINT_URL_KMS });
const TABLE = env.TABLE_NAME as string;
const headers = {
  Authorization: `Basic ${Buffer.from('bench-id:bench-key').toString('base64')}`,
  'X-Service-Auth-Organization-Id': ORG,
  'Content-Type': 'application/json',
};

async function api(path: string, init: { method?: string; body?: unknown } = {}): Promise<Record<string, unknown>> {
  const response = await fetch(`${runtime.url}${path}`, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  const body = (await response.json()) as Record<string, unknown>;
  if (response.status >= 300) throw new Error(`${path}: ${response.status} ${JSON.stringify(body)}`);
  return body;
}

async function timed(run: () => Promise<unknown>, iterations = ITERATIONS): Promise<number> {
  await run(); // warm: module load, connections, cached keys
  const samples: number[] = [];
  for (let index = 0; index < iterations; index += 1) {
    const started = performance.now();
    await run();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)] as number;
}

const id = (prefix: string) => `${prefix}${randomBytes(6).toString('hex')}`;
const ms = (value: number) => `${value.toFixed(1)} ms`;

try {
  const loc = id('loc_');
  runtime.kmsCalls.reset();
  // Create: through the API vs. the bare calls a warm create makes (pointer GetItem + one TransactWriteItems).
  const createApi = await timed(() => api(`/v3/organizations/${ORG}/locations/${loc}/customers/${id('cst_')}/paymethods`, { method: 'POST', body: { card: CARD } }));
  const coldKmsCalls = { ...runtime.kmsCalls.calls }; // ITERATIONS + 1 creates, the first one cold for this organization
  const vaultKey = env.VAULT_KEY_ID as string;
  const createBare = await timed(async () => {
    const token = id('mth_bench');
    const cst = id('cst_');
    await dynamo.send(new GetCommand({ TableName: TABLE, Key: { pk: `CST#${ORG}#${cst}`, sk: 'DEFAULT' }, ConsistentRead: true }));
    await dynamo.send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: TABLE, Item: { pk: `CST#${ORG}#${cst}`, sk: 'DEFAULT', paymethod_token: token }, ConditionExpression: 'attribute_not_exists(pk)' } },
          { Put: { TableName: TABLE, Item: { pk: `BENCH#${token}`, sk: 'MTH', gsi9pk: `BENCH#${ORG}`, gsi9sk: new Date().toISOString(), card: CARD }, ConditionExpression: 'attribute_not_exists(pk)' } },
        ],
      }),
    );
  });
  const generateDataKey = await timed(() => kms.send(new GenerateDataKeyCommand({ KeyId: vaultKey, KeySpec: 'AES_256', EncryptionContext: { purpose: 'paymethod-vault', organization_id: ORG } })));

  // KMS calls per create: a warm container vs. the first create of an organization.
  runtime.kmsCalls.reset();
  const creates = 50;
  for (let index = 0; index < creates; index += 1) await api(`/v3/organizations/${ORG}/locations/${loc}/paymethods`, { method: 'POST', body: { card: CARD } });
  const warmKmsCalls = { ...runtime.kmsCalls.calls };

  // Get: through the API vs. one GetItem.
  const made = await api(`/v3/organizations/${ORG}/locations/${loc}/paymethods`, { method: 'POST', body: { card: CARD } });
  const token = made.paymethod_token as string;
  const getApi = await timed(() => api(`/v3/organizations/${ORG}/locations/${loc}/paymethods/${token}`));
  const getBare = await timed(() => dynamo.send(new GetCommand({ TableName: TABLE, Key: { pk: `MTH#${token}`, sk: 'MTH' } })));

  // List: a 50-record page of a location holding 100+ paymethods vs. the calls behind it: the keys-only
  // index Query (Limit 51), then one BatchGetItem of the page's 50 items.
  const listPath = `/v3/organizations/${ORG}/locations/${loc}/paymethods?page_size=50`;
  const page = await api(listPath);
  const listApi = await timed(() => api(listPath));
  const listQuery = { TableName: TABLE, IndexName: 'gsi8', KeyConditionExpression: 'gsi8pk = :pk', ExpressionAttributeValues: { ':pk': `LOC#${ORG}#${loc}#MTH` }, ScanIndexForward: false, Limit: 51 };
  const pageKeys = async (capacity?: 'TOTAL') => {
    const entries = await dynamo.send(new QueryCommand({ ...listQuery, ...(capacity ? { ReturnConsumedCapacity: capacity } : {}) }));
    const Keys = (entries.Items ?? []).slice(0, 50).map((item) => ({ pk: item.pk, sk: item.sk }));
    const items = await dynamo.send(new BatchGetCommand({ RequestItems: { [TABLE]: { Keys } }, ...(capacity ? { ReturnConsumedCapacity: capacity } : {}) }));
    return { rcu: (entries.ConsumedCapacity?.CapacityUnits ?? 0) + (items.ConsumedCapacity ?? []).reduce((sum, entry) => sum + (entry.CapacityUnits ?? 0), 0), entries: entries.ScannedCount ?? 0, items: Object.values(items.Responses ?? {}).flat().length };
  };
  const listBare = await timed(() => pageKeys());
  const consumed = await pageKeys('TOTAL');

  const figures = {
    iterations: ITERATIONS,
    median_latency: {
      create: { api: ms(createApi), bare_dynamodb_getitem_plus_transactwrite: ms(createBare), bare_kms_generate_data_key: ms(generateDataKey) },
      get: { api: ms(getApi), bare_dynamodb_getitem: ms(getBare) },
      list_page_50: { api: ms(listApi), bare_dynamodb_query_limit_51_plus_batchget_50: ms(listBare), results: page.number_results },
    },
    kms_calls_first_creates: { creates: ITERATIONS + 1, calls: coldKmsCalls },
    kms_calls: { creates, calls: warmKmsCalls, per_create: (Object.values(warmKmsCalls).reduce((sum, count) => sum + count, 0) / creates).toFixed(3) },
    list_page_50_read_capacity: { consumed_rcu: consumed.rcu, index_entries_read: consumed.entries, items_read: consumed.items },
  };
  console.log(JSON.stringify(figures, null, 2));
  recordRun('paymethods', figures);
} finally {
  dynamo.destroy();
  kms.destroy();
  await runtime.close();
}
