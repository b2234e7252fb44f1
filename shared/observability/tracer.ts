import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import type { Socket } from 'node:dgram';
import type { MiddlewareObj } from '@middy/core';
import { SERVICE_NAME } from './catalog.ts';

/**
 * X-Ray tracing without the X-Ray SDK (~100 KiB and a third of a floor's cold
 * start in every bundle). With active tracing, Lambda itself records each
 * invocation's segment and hands the function its trace header
 * (`_X_AMZN_TRACE_ID`, set per invocation) and the local daemon's address;
 * this module adds what the SDK added under that segment, as X-Ray segment
 * documents sent over UDP to the daemon:
 *
 * - `## index.handler`, one subsegment per invocation, annotated with
 *   `ColdStart`, `Service` and whatever `putAnnotation` adds (the route);
 * - one subsegment per AWS SDK call of an instrumented client (service,
 *   operation, region, request id, retries, status, error/throttle/fault),
 *   whose id is passed on in the request's `X-Amzn-Trace-Id` header.
 *
 * Nothing is recorded outside Lambda (no daemon address), when the invocation
 * is not sampled, or when POWERTOOLS_TRACE_ENABLED=false (the local runtime
 * sets it): handler code is the same everywhere. Responses and request
 * payloads are never recorded: they are tenant data. Lambda runs one
 * invocation at a time per environment, so one current subsegment suffices.
 */

interface TraceHeader {
  root: string;
  parent: string;
}

interface Subsegment {
  name: string;
  id: string;
  trace_id: string;
  parent_id: string;
  start_time: number;
  end_time?: number;
  type: 'subsegment';
  namespace?: 'aws';
  annotations?: Record<string, string | number | boolean>;
  aws?: Record<string, unknown>;
  http?: { response: { status: number } };
  error?: boolean;
  throttle?: boolean;
  fault?: boolean;
}

/** The sampled invocation's trace header, or undefined when nothing is to be recorded. */
function sampledTraceHeader(): TraceHeader | undefined {
  if (process.env.POWERTOOLS_TRACE_ENABLED === 'false' || !process.env.AWS_XRAY_DAEMON_ADDRESS) return undefined;
  const fields = Object.fromEntries((process.env._X_AMZN_TRACE_ID ?? '').split(';').map((part) => part.split('=') as [string, string]));
  if (!fields.Root || !fields.Parent || fields.Sampled !== '1') return undefined;
  return { root: fields.Root, parent: fields.Parent };
}

const seconds = () => Date.now() / 1000;
const newId = () => randomBytes(8).toString('hex');

let socket: Socket | undefined;
function send(subsegment: Subsegment): void {
  // "udp:host:port tcp:host:port" or "host:port"
  const address = process.env.AWS_XRAY_DAEMON_ADDRESS ?? '';
  const udp = /(?:^|\s)(?:udp:)?([^\s:]+):(\d+)/.exec(address.split(' ').find((part) => !part.startsWith('tcp:')) ?? '');
  if (!udp) return;
  if (!socket) {
    socket = createSocket('udp4');
    socket.unref();
  }
  socket.send(`{"format":"json","version":1}\n${JSON.stringify(subsegment)}`, Number(udp[2]), udp[1]);
}

export class Tracer {
  private coldStart = true;
  private current: Subsegment | undefined;

  constructor(private readonly serviceName: string) {}

  /** Opens the invocation's `## index.handler` subsegment (if this invocation is sampled). */
  startInvocation(): void {
    const header = sampledTraceHeader();
    const coldStart = this.coldStart;
    this.coldStart = false;
    this.current = header && {
      name: '## index.handler',
      id: newId(),
      trace_id: header.root,
      parent_id: header.parent,
      start_time: seconds(),
      type: 'subsegment',
      annotations: { ColdStart: coldStart, Service: this.serviceName },
    };
  }

  endInvocation(outcome: { statusCode?: number; failed?: boolean }): void {
    const subsegment = this.current;
    this.current = undefined;
    if (!subsegment) return;
    subsegment.end_time = seconds();
    if (outcome.failed || (outcome.statusCode ?? 0) >= 500) subsegment.fault = true;
    send(subsegment);
  }

  putAnnotation(key: string, value: string | number | boolean): void {
    if (this.current) this.current.annotations = { ...this.current.annotations, [key]: value };
  }

  /** Records every call the client makes as a subsegment of the current invocation. Returns the client. */
  captureAWSv3Client<Client extends { middlewareStack: unknown; config: unknown }>(client: Client): Client {
    const stack = client.middlewareStack as { add(middleware: unknown, options: { step: 'build'; name: string }): void };
    const config = client.config as { region?: string | (() => Promise<string>) };
    stack.add(
      (next: (args: { request: { headers?: Record<string, string> } }) => Promise<{ output?: { $metadata?: SdkMetadata } }>, context: { clientName?: string; commandName?: string }) =>
        async (args: { request: { headers?: Record<string, string> } }) => {
          const parent = this.current;
          if (!parent) return next(args);
          const subsegment: Subsegment = {
            name: (context.clientName ?? 'AWS').replace(/Client$/, ''),
            namespace: 'aws',
            id: newId(),
            trace_id: parent.trace_id,
            parent_id: parent.id,
            start_time: seconds(),
            type: 'subsegment',
          };
          if (args.request.headers) args.request.headers['X-Amzn-Trace-Id'] = `Root=${parent.trace_id};Parent=${subsegment.id};Sampled=1`;
          const region = typeof config.region === 'function' ? await config.region().catch(() => undefined) : config.region;
          const record = (metadata: SdkMetadata | undefined, failure?: { name?: string }) => {
            subsegment.end_time = seconds();
            subsegment.aws = {
              operation: (context.commandName ?? '').replace(/Command$/, ''),
              region,
              request_id: metadata?.requestId,
              retries: Math.max(0, (metadata?.attempts ?? 1) - 1),
            };
            const status = metadata?.httpStatusCode;
            if (status) subsegment.http = { response: { status } };
            if (failure) {
              if (status === 429 || /Throttl/.test(failure.name ?? '')) subsegment.throttle = true;
              if (!status || status >= 500) subsegment.fault = true;
              else subsegment.error = true;
            }
            send(subsegment);
          };
          try {
            const result = await next(args);
            record(result.output?.$metadata);
            return result;
          } catch (error) {
            record((error as { $metadata?: SdkMetadata }).$metadata, error as { name?: string });
            throw error;
          }
        },
      { step: 'build', name: 'xrayTracing' },
    );
    return client;
  }
}

interface SdkMetadata {
  httpStatusCode?: number;
  requestId?: string;
  attempts?: number;
}

/** One tracer per function. */
export const tracer = new Tracer(process.env.POWERTOOLS_SERVICE_NAME ?? SERVICE_NAME);

/**
 * Middleware: the invocation's subsegment, closed with the status the client
 * got (a 5xx or an unhandled failure is a fault). Never records the response.
 */
export function captureLambdaHandler(target: Tracer, _options: { captureResponse: false }): MiddlewareObj {
  const end = (request: { response?: unknown; error?: unknown }) => {
    const statusCode = (request.response as { statusCode?: number } | null | undefined)?.statusCode;
    target.endInvocation({ statusCode, failed: request.response == null && request.error != null });
  };
  return { before: () => target.startInvocation(), after: end, onError: end };
}
