import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { injectLambdaContext, Logger } from '#shared/log/logger.ts';
import { REDACTED } from '#shared/log/redact.ts';
import { captureLambdaHandler, Tracer } from '#shared/observability/tracer.ts';

const CARD_NUMBER = '4111111111111111';
const lambdaContext = {
  functionName: 'payments-get',
  memoryLimitInMB: '512',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:payments-get',
  awsRequestId: 'req-1',
} as Context;

function captureStreams() {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => out.push(String(chunk)) > 0);
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => err.push(String(chunk)) > 0);
  return { out, err, lines: () => [...out, ...err].map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('structured logger', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  it('writes one JSON line with the Lambda context, cold start once, and keys reset per invocation', async () => {
    vi.stubEnv('LOG_LEVEL', 'INFO');
    vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1');
    const logger = new Logger();
    const handler = middy<{ key?: string }>()
      .use(injectLambdaContext(logger, { resetKeys: true }))
      .handler(async (event: { key?: string }) => {
        if (event.key) logger.appendKeys({ route: event.key });
        logger.info('served');
      });
    const streams = captureStreams();
    await handler({ key: 'GET /v3/x' }, lambdaContext);
    await handler({}, lambdaContext);
    const [first, second] = streams.lines();
    expect(first).toMatchObject({
      level: 'INFO',
      message: 'served',
      service: 'payments-api',
      cold_start: true,
      function_name: 'payments-get',
      function_memory_size: 512,
      function_arn: lambdaContext.invokedFunctionArn,
      function_request_id: 'req-1',
      xray_trace_id: '1-5759e988-bd862e3fe1be46a994272793',
      route: 'GET /v3/x',
    });
    expect(Number.isNaN(Date.parse(first!.timestamp as string))).toBe(false);
    expect(second).toMatchObject({ cold_start: false });
    expect(second).not.toHaveProperty('route');
  });

  it('redacts secret members and card numbers, also inside errors, and keeps the error readable', () => {
    const logger = new Logger();
    const streams = captureStreams();
    const failure = Object.assign(new Error(`card ${CARD_NUMBER} refused`), { code: 'E_CARD' });
    logger.error('failed', { error: failure, card: { account_number: '6011000990139424', card_type: 'visa' }, authorization: 'Basic c2VjcmV0' });
    expect(streams.out).toEqual([]);
    const text = streams.err.join('');
    expect(text).not.toContain(CARD_NUMBER);
    expect(text).not.toContain('6011000990139424');
    expect(text).not.toContain('c2VjcmV0');
    const [line] = streams.lines();
    expect(line).toMatchObject({ level: 'ERROR', card: { account_number: REDACTED, card_type: 'visa' }, authorization: REDACTED });
    expect(line!.error).toMatchObject({ name: 'Error', message: `card ${REDACTED} refused`, code: 'E_CARD' });
    expect((line!.error as { stack: string }).stack).toContain('observability.test.ts');
  });

  it('honours LOG_LEVEL', () => {
    vi.stubEnv('LOG_LEVEL', 'WARN');
    const logger = new Logger();
    const streams = captureStreams();
    logger.info('dropped');
    logger.warn('kept');
    expect(streams.lines().map((line) => line.message)).toEqual(['kept']);
  });
});

describe('tracer', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  async function daemon() {
    const socket = createSocket('udp4');
    const documents: Record<string, unknown>[] = [];
    socket.on('message', (message) => {
      const [header, body] = message.toString().split('\n');
      expect(JSON.parse(header!)).toEqual({ format: 'json', version: 1 });
      documents.push(JSON.parse(body!) as Record<string, unknown>);
    });
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return { documents, port: (socket.address() as AddressInfo).port, close: () => socket.close() };
  }

  it('sends the handler and SDK call subsegments of a sampled invocation to the daemon, with the header passed on', async () => {
    const xray = await daemon();
    vi.stubEnv('AWS_XRAY_DAEMON_ADDRESS', `127.0.0.1:${xray.port}`);
    vi.stubEnv('POWERTOOLS_TRACE_ENABLED', 'true');
    vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1');
    const tracer = new Tracer('payments-api');
    const sentHeaders: Record<string, string>[] = [];
    const client = tracer.captureAWSv3Client(
      new DynamoDBClient({
        region: 'eu-west-1',
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
        requestHandler: {
          handle: async (request: { headers: Record<string, string> }) => {
            sentHeaders.push(request.headers);
            return { response: { statusCode: 200, headers: { 'x-amzn-requestid': 'ddb-req-1', 'content-type': 'application/x-amz-json-1.0' }, body: new TextEncoder().encode('{}') } };
          },
        },
      }),
    );
    const handler = middy()
      .use(captureLambdaHandler(tracer, { captureResponse: false }))
      .handler(async () => {
        tracer.putAnnotation('route', 'paymethods-get');
        await client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } } }));
        return { statusCode: 200, body: 'secret body' };
      });
    await handler({}, lambdaContext);
    await vi.waitFor(() => expect(xray.documents).toHaveLength(2));
    xray.close();
    const [call, invocation] = xray.documents as [Record<string, unknown>, Record<string, unknown>];
    expect(invocation).toMatchObject({
      name: '## index.handler',
      type: 'subsegment',
      trace_id: '1-5759e988-bd862e3fe1be46a994272793',
      parent_id: '53995c3f42cd8ad8',
      annotations: { ColdStart: true, Service: 'payments-api', route: 'paymethods-get' },
    });
    expect(call).toMatchObject({
      name: 'DynamoDB',
      namespace: 'aws',
      parent_id: invocation.id,
      aws: { operation: 'GetItem', region: 'eu-west-1', request_id: 'ddb-req-1', retries: 0 },
      http: { response: { status: 200 } },
    });
    expect(JSON.stringify(xray.documents)).not.toContain('secret body');
    expect(sentHeaders[0]?.['X-Amzn-Trace-Id']).toBe(`Root=1-5759e988-bd862e3fe1be46a994272793;Parent=${call.id as string};Sampled=1`);
  });

  it('records nothing when the invocation is not sampled or tracing is off', async () => {
    const xray = await daemon();
    vi.stubEnv('AWS_XRAY_DAEMON_ADDRESS', `127.0.0.1:${xray.port}`);
    const tracer = new Tracer('payments-api');
    const handler = middy()
      .use(captureLambdaHandler(tracer, { captureResponse: false }))
      .handler(async () => ({ statusCode: 200 }));
    vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0');
    await handler({}, lambdaContext);
    vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1');
    vi.stubEnv('POWERTOOLS_TRACE_ENABLED', 'false');
    await handler({}, lambdaContext);
    // A sampled, enabled invocation afterwards is the marker that everything before it was sent, or not.
    vi.stubEnv('POWERTOOLS_TRACE_ENABLED', 'true');
    await handler({}, lambdaContext);
    await vi.waitFor(() => expect(xray.documents.length).toBeGreaterThan(0));
    xray.close();
    expect(xray.documents).toHaveLength(1);
    expect(xray.documents[0]).toMatchObject({ annotations: { ColdStart: false } });
  });
});
