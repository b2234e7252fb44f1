import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { awsClient, DYNAMODB_BUDGET } from '#shared/aws/client-config.ts';
import { functionContainer, runInContainer } from '#shared/runtime/container.ts';

/** The access key id of each request the SDK sends, as its Authorization header names it. */
const signers: string[] = [];
const server = createServer((req, res) => {
  signers.push(/Credential=([^/]+)\//.exec(req.headers.authorization ?? '')?.[1] ?? '(unsigned)');
  res.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.0' }).end('{"TableNames":[]}');
});
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.env.AWS_ENDPOINT_URL_DYNAMODB = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.env.AWS_REGION ??= 'us-east-1';
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

it("signs each call with the credentials of the function container it runs in, one client for all, calls interleaved", async () => {
  const client = awsClient(DynamoDBClient, 'DynamoDB', DYNAMODB_BUDGET);
  const containers = ['AKIAFIRSTFUNCTION', 'AKIASECONDFUNCTION'].map((key) => [key, functionContainer({ AWS_ACCESS_KEY_ID: key, AWS_SECRET_ACCESS_KEY: `${key}-secret` })] as const);
  const sent = containers.flatMap(([key, container]) => [0, 1, 2].map(async () => ({ key, result: await runInContainer(container, () => client.send(new ListTablesCommand({}))) })));
  await Promise.all(sent);
  client.destroy();
  expect(signers.toSorted()).toEqual(['AKIAFIRSTFUNCTION', 'AKIAFIRSTFUNCTION', 'AKIAFIRSTFUNCTION', 'AKIASECONDFUNCTION', 'AKIASECONDFUNCTION', 'AKIASECONDFUNCTION']);
});
