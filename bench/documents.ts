/**
 * `npx tsx bench/documents.ts`: starts the local runtime in this process and
 * measures
 * 1. peak memory of the upload handler for the largest single-request file,
 *    in a fresh child process (--expose-gc), as a ratio to the file size;
 * 2. median upload latency through the local runtime (HTTP, emulator,
 *    authorizer, handler, s3rver, DynamoDB Local) next to the median of a bare
 *    S3 PutObject + DynamoDB PutItem of the same bytes from this process.
 * Figures are for this machine; compare them with each other, not across machines.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { startLocalRuntime } from '../local/runtime.ts';
import { BOUNDARY, multipartBody, uploadParts } from '../test/fixtures/documents.ts';
import { recordRun } from './results.ts';
import { median } from './support.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const ORG = 'org_bench';
const credentials = { api_access_id: 'bench-id', api_secure_key: 'bench-key' };

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

const runtime = await startLocalRuntime({ port: 0, seed: { organizations: [{ organization_id: ORG, credentials: [credentials] }] } });
try {
  const authorization = `Basic ${Buffer.from(`${credentials.api_access_id}:${credentials.api_secure_key}`).toString('base64')}`;
  // A resource_id per upload: the same bytes twice for one resource_id are a duplicate (409).
  let uploads = 0;
  const post = (bytes: Buffer) =>
    fetch(`${runtime.url}/v3/organizations/${ORG}/documents`, {
      method: 'POST',
      headers: { Authorization: authorization, 'X-Service-Auth-Organization-Id': ORG, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` },
      body: multipartBody(uploadParts({ resource: 'application', resource_id: `app_b${(uploads += 1)}` }, { name: 'bench.txt', contentType: 'text/plain', bytes }), BOUNDARY),
    });

  // The largest file this request shape carries (see test/integration/documents-payload-cap.test.ts).
  let size = 4_716_499;
  while ((await post(Buffer.alloc(size, 0x61))).status === 413) size -= 1_000;
  const file = Buffer.alloc(size, 0x61);

  // Asynchronous on purpose: s3rver runs on this process's event loop and must keep serving the child.
  const child = await promisify(execFile)(process.execPath, ['--expose-gc', '--import', 'tsx', path.join(import.meta.dirname, 'documents-memory.ts')], {
    env: { ...process.env, ...runtime.handlerEnvironment, BENCH_FILE_BYTES: String(size), BENCH_ORGANIZATION_ID: ORG, LOG_LEVEL: 'WARN' },
    encoding: 'utf8',
  });
  const memory = JSON.parse(child.stdout.trim().split('\n').pop() as string) as {
    file_bytes: number;
    peak_rss_increase_bytes: number;
    peak_array_buffers_increase_bytes: number;
    peak_heap_increase_bytes: number;
  };

  const throughApi: number[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    const started = performance.now();
    const answer = await post(file);
    await answer.arrayBuffer();
    if (answer.status !== 201) throw new Error(`upload answered ${answer.status}`);
    throughApi.push(performance.now() - started);
  }

  const s3 = new S3Client({ forcePathStyle: true });
  const dynamodb = new DynamoDBClient({});
  const bare: number[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    const started = performance.now();
    const key = `bench/${randomUUID()}`;
    await s3.send(new PutObjectCommand({ Bucket: runtime.handlerEnvironment.DOCUMENTS_BUCKET, Key: key, Body: file, ContentType: 'text/plain' }));
    await dynamodb.send(new PutItemCommand({ TableName: runtime.handlerEnvironment.TABLE_NAME, Item: { pk: { S: `BENCH#${key}` }, sk: { S: 'BENCH' }, size: { N: String(size) } } }));
    bare.push(performance.now() - started);
  }
  s3.destroy();
  dynamodb.destroy();

  const results = {
    largest_single_request_file_bytes: size,
    memory: {
      ...memory,
      peak_rss_ratio: Number((memory.peak_rss_increase_bytes / size).toFixed(2)),
      peak_array_buffers_ratio: Number((memory.peak_array_buffers_increase_bytes / size).toFixed(2)),
    },
    latency_ms: { runs: RUNS, upload_through_local_runtime_median: Math.round(median(throughApi)), bare_s3_put_plus_dynamodb_put_median: Math.round(median(bare)) },
  };
  console.log(JSON.stringify(results, null, 2));
  recordRun('documents', results);
  console.log(
    `\nlargest single-request file ${size} bytes (${mib(size)}): handler peak RSS +${mib(memory.peak_rss_increase_bytes)} (${results.memory.peak_rss_ratio}x), ` +
      `array buffers +${mib(memory.peak_array_buffers_increase_bytes)} (${results.memory.peak_array_buffers_ratio}x); ` +
      `median upload ${results.latency_ms.upload_through_local_runtime_median} ms vs bare puts ${results.latency_ms.bare_s3_put_plus_dynamodb_put_median} ms`,
  );
} finally {
  await runtime.close();
}
