/**
 * Child process of bench/documents.ts, run with --expose-gc: invokes the
 * upload handler once with the largest single-request file and reports how
 * far memory rose above the settled baseline. The proxy event (with its
 * base64 body) is built before the baseline: in Lambda it exists before the
 * handler runs, and the runtime's own copy of it is not ours to shrink.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { BOUNDARY, multipartBody, uploadParts } from '../test/fixtures/documents.ts';

const size = Number(process.env.BENCH_FILE_BYTES);
const organizationId = process.env.BENCH_ORGANIZATION_ID as string;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const { handler } = (await import('../functions/documents-create.ts')) as unknown as {
  handler: (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
};

function event(bytes: number): APIGatewayProxyEvent {
  const body = multipartBody(uploadParts({ resource: 'application', resource_id: 'app_1' }, { name: 'bench.txt', contentType: 'text/plain', bytes: Buffer.alloc(bytes, 0x61) }), BOUNDARY);
  return {
    resource: '/v3/organizations/{organization_id}/documents',
    path: `/v3/organizations/${organizationId}/documents`,
    httpMethod: 'POST',
    headers: { Host: 'localhost', 'X-Service-Auth-Organization-Id': organizationId, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: { organization_id: organizationId },
    stageVariables: null,
    body: body.toString('base64'),
    isBase64Encoded: true,
    requestContext: { requestId: randomUUID(), path: `/v3/organizations/${organizationId}/documents`, authorizer: { credentialKind: 'secret', organizationId, accessId: 'bench' } } as never,
  };
}

const context = { functionName: 'documents-create', awsRequestId: randomUUID(), getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

// Warm up: load every module and open the connections with a small file.
const warm = await handler(event(1000), context);
if (warm.statusCode !== 201) throw new Error(`warm-up upload failed: ${warm.body}`);

const largest = event(size);
gc();
await sleep(50);
gc();
const baseline = process.memoryUsage();
const baselineMaxRss = process.resourceUsage().maxRSS * 1024;
let peakArrayBuffers = baseline.arrayBuffers;
let peakHeap = baseline.heapUsed;
const sampler = setInterval(() => {
  const now = process.memoryUsage();
  peakArrayBuffers = Math.max(peakArrayBuffers, now.arrayBuffers);
  peakHeap = Math.max(peakHeap, now.heapUsed);
}, 1);
const result = await handler(largest, context);
clearInterval(sampler);
if (result.statusCode !== 201) throw new Error(`upload failed: ${result.statusCode} ${result.body}`);
const maxRss = process.resourceUsage().maxRSS * 1024;

console.log(
  JSON.stringify({
    file_bytes: size,
    peak_rss_increase_bytes: maxRss - baselineMaxRss,
    peak_array_buffers_increase_bytes: peakArrayBuffers - baseline.arrayBuffers,
    peak_heap_increase_bytes: peakHeap - baseline.heapUsed,
  }),
);
process.exit(0);
