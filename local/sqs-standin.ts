/**
 * A loopback stand-in for the SQS operations the webhook functions and the
 * local event source mappings use, speaking SQS's AWS JSON 1.0 protocol
 * (`AmazonSQS.<Operation>`), so the unmodified `@aws-sdk/client-sqs` reaches
 * it through AWS_ENDPOINT_URL_SQS. Like every local endpoint it is a gate
 * (local/aws-json-standin.ts): calls are signed, and a function may only make
 * the calls its queue grants (shared/platform/webhooks.ts) allow.
 *
 * Why a stand-in and not an emulator from npm: SQS's JSON protocol is a few
 * operations here, the fair-queue receive order and redrive are what the
 * delivery design leans on, and a stand-in keeps them exactly as AWS documents
 * them, no kinder: a standard queue (no order promised: a message shown again
 * goes behind the others), visibility and delays in whole seconds capped at 12
 * hours, redrive to the dead-letter queue after maxReceiveCount receives,
 * retention, and fair queues (MessageGroupId on a standard queue): a receive
 * serves the groups with the fewest messages in flight first, which is how
 * AWS describes keeping quiet tenants' dwell time low beside a noisy one.
 */
import { createHash, randomUUID } from 'node:crypto';
import { startAwsJsonStandin } from './aws-json-standin.ts';
import type { Body } from './aws-json-standin.ts';
import type { Log } from './gate-server.ts';
import { AwsServiceError } from './gate-server.ts';
import { grantsOf, logRefusal, notAuthorized } from './function-identity.ts';
import { LOCAL_ACCOUNT_ID } from './lambda-context.ts';
import type { Principal } from './signing-credentials.ts';
import type { SignatureVerifier } from './sigv4.ts';
import type { QueueGrant, WebhookQueue } from '#shared/platform/webhooks.ts';
import { queueGrantsAllow } from '#shared/platform/webhooks.ts';

export interface QueueConfig {
  /** The queue's name; its grants name it by `granted`. */
  readonly name: string;
  readonly granted: WebhookQueue;
  readonly retentionSeconds: number;
  readonly visibilityTimeoutSeconds: number;
  readonly maxReceiveCount: number;
}

export interface ReceivedMessage {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly body: string;
  readonly attributes: Record<string, string>;
}

interface StoredMessage {
  readonly id: string;
  readonly body: string;
  readonly group: string;
  readonly sentAt: number;
  visibleAt: number;
  receiveCount: number;
  receipt?: string;
  firstReceivedAt?: number;
}

/** One queue: visible messages per group, waiting ones in a heap by the time they show again. */
export class LocalQueue {
  private readonly visible = new Map<string, StoredMessage[]>();
  private readonly inFlight = new Map<string, number>();
  private readonly waiting: StoredMessage[] = [];
  private readonly byReceipt = new Map<string, StoredMessage>();
  private readonly listeners = new Set<() => void>();
  readonly deadLetters: StoredMessage[] = [];

  constructor(readonly config: QueueConfig) {}

  get depth(): number {
    let count = this.waiting.length;
    for (const messages of this.visible.values()) count += messages.length;
    return count;
  }

  send(body: string, group: string | undefined, delaySeconds = 0): string {
    const now = Date.now();
    const message: StoredMessage = { id: randomUUID(), body, group: group ?? '', sentAt: now, visibleAt: now + delaySeconds * 1000, receiveCount: 0 };
    this.place(message, now);
    return message.id;
  }

  receive(max: number, now = Date.now()): ReceivedMessage[] {
    this.release(now);
    const received: ReceivedMessage[] = [];
    while (received.length < max) {
      const group = this.quietestGroup();
      if (group === undefined) break;
      const messages = this.visible.get(group)!;
      const message = messages.shift()!;
      if (messages.length === 0) this.visible.delete(group);
      if (now - message.sentAt > this.config.retentionSeconds * 1000) continue;
      message.receiveCount += 1;
      if (message.receiveCount > this.config.maxReceiveCount) {
        this.deadLetters.push(message);
        continue;
      }
      message.firstReceivedAt ??= now;
      message.receipt = randomUUID();
      message.visibleAt = now + this.config.visibilityTimeoutSeconds * 1000;
      this.byReceipt.set(message.receipt, message);
      this.inFlight.set(message.group, (this.inFlight.get(message.group) ?? 0) + 1);
      this.pushWaiting(message);
      received.push({
        messageId: message.id,
        receiptHandle: message.receipt,
        body: message.body,
        attributes: {
          ApproximateReceiveCount: String(message.receiveCount),
          SentTimestamp: String(message.sentAt),
          ApproximateFirstReceiveTimestamp: String(message.firstReceivedAt),
          ...(message.group ? { MessageGroupId: message.group } : {}),
        },
      });
    }
    return received;
  }

  delete(receipt: string): void {
    const message = this.byReceipt.get(receipt);
    if (!message) return;
    this.byReceipt.delete(receipt);
    this.leaveFlight(message);
    const index = this.waiting.indexOf(message);
    if (index >= 0) this.removeWaitingAt(index);
  }

  changeVisibility(receipt: string, seconds: number): void {
    const message = this.byReceipt.get(receipt);
    if (!message) throw new AwsServiceError('ReceiptHandleIsInvalid', 'The receipt handle is not valid for this queue.');
    const index = this.waiting.indexOf(message);
    if (index >= 0) this.removeWaitingAt(index);
    message.visibleAt = Date.now() + seconds * 1000;
    this.pushWaiting(message);
  }

  /** Resolves when a message may be visible (a send, or the next waiting one's time), or after `ms`. */
  waitForMessages(ms: number): Promise<void> {
    const next = this.waiting[0]?.visibleAt;
    const wait = Math.max(0, Math.min(ms, next !== undefined ? next - Date.now() : ms));
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(done);
        resolve();
      };
      const timer = setTimeout(done, wait);
      this.listeners.add(done);
    });
  }

  private place(message: StoredMessage, now: number): void {
    if (message.visibleAt <= now) {
      const messages = this.visible.get(message.group);
      if (messages) messages.push(message);
      else this.visible.set(message.group, [message]);
      for (const listener of [...this.listeners]) listener();
    } else {
      this.pushWaiting(message);
    }
  }

  /** Waiting messages whose time came: a received one's receipt lapses (and it leaves the flight), then it is visible again. */
  private release(now: number): void {
    while (this.waiting.length > 0 && this.waiting[0]!.visibleAt <= now) {
      const message = this.popWaiting();
      if (message.receipt) {
        this.byReceipt.delete(message.receipt);
        delete message.receipt;
        this.leaveFlight(message);
      }
      this.place(message, now);
    }
  }

  /** The group with a visible message and the fewest messages in flight (ties: the longest waiting). */
  private quietestGroup(): string | undefined {
    let best: string | undefined;
    let bestFlight = Infinity;
    let bestSent = Infinity;
    for (const [group, messages] of this.visible) {
      const flight = this.inFlight.get(group) ?? 0;
      const sent = messages[0]!.sentAt;
      if (flight < bestFlight || (flight === bestFlight && sent < bestSent)) {
        best = group;
        bestFlight = flight;
        bestSent = sent;
      }
    }
    return best;
  }

  private leaveFlight(message: StoredMessage): void {
    const count = (this.inFlight.get(message.group) ?? 1) - 1;
    if (count <= 0) this.inFlight.delete(message.group);
    else this.inFlight.set(message.group, count);
  }

  // A binary heap on visibleAt.
  private pushWaiting(message: StoredMessage): void {
    const heap = this.waiting;
    heap.push(message);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (heap[parent]!.visibleAt <= heap[index]!.visibleAt) break;
      [heap[parent], heap[index]] = [heap[index]!, heap[parent]!];
      index = parent;
    }
  }

  private popWaiting(): StoredMessage {
    return this.removeWaitingAt(0);
  }

  private removeWaitingAt(at: number): StoredMessage {
    const heap = this.waiting;
    const removed = heap[at]!;
    const last = heap.pop()!;
    if (at < heap.length) {
      heap[at] = last;
      this.siftDown(at);
      // Moved up if it is earlier than its new parent.
      let index = at;
      while (index > 0) {
        const parent = (index - 1) >> 1;
        if (heap[parent]!.visibleAt <= heap[index]!.visibleAt) break;
        [heap[parent], heap[index]] = [heap[index]!, heap[parent]!];
        index = parent;
      }
    }
    return removed;
  }

  private siftDown(start: number): void {
    const heap = this.waiting;
    let index = start;
    for (;;) {
      const left = index * 2 + 1;
      const right = left + 1;
      let smallest = index;
      if (left < heap.length && heap[left]!.visibleAt < heap[smallest]!.visibleAt) smallest = left;
      if (right < heap.length && heap[right]!.visibleAt < heap[smallest]!.visibleAt) smallest = right;
      if (smallest === index) return;
      [heap[smallest], heap[index]] = [heap[index]!, heap[smallest]!];
      index = smallest;
    }
  }
}

export interface SqsStandinOptions {
  readonly queues: readonly QueueConfig[];
  /** Each function's queue grants. */
  readonly functions: ReadonlyMap<string, readonly QueueGrant[]>;
  readonly verifier: SignatureVerifier;
  readonly log: Log;
  readonly region?: string;
}

export interface SqsStandin {
  readonly url: string;
  /** The queue URL SDK calls name. */
  queueUrl(name: string): string;
  /** The queues themselves, for the runtime's event source mappings and the EventBridge rule's target (AWS's own services, not a function). */
  queue(granted: WebhookQueue): LocalQueue;
  close(): Promise<void>;
}

/** SQS's limits: 10 entries a batch, 256 KiB a message, 12 hours of visibility, 15 minutes of delay. */
const MAX_BATCH = 10;
const MAX_MESSAGE_BYTES = 256 * 1024;
const MAX_VISIBILITY_SECONDS = 43_200;
const MAX_DELAY_SECONDS = 900;

export async function startSqsStandin(options: SqsStandinOptions): Promise<SqsStandin> {
  const queues = new Map(options.queues.map((config) => [config.name, new LocalQueue(config)]));
  let baseUrl = '';
  const queueNamed = (url: unknown): LocalQueue => {
    const name = typeof url === 'string' ? url.split('/').at(-1) : undefined;
    const queue = name === undefined ? undefined : queues.get(name);
    if (!queue) throw new AwsServiceError('QueueDoesNotExist', 'The specified queue does not exist.');
    return queue;
  };
  const authorize = (principal: Principal, operation: string, queue: LocalQueue) => {
    const grants = grantsOf(principal, options.functions);
    // IAM authorizes a batch call as its single action (sqs:SendMessage for SendMessageBatch).
    const action = operation.replace(/Batch$/, '');
    if (grants === undefined || queueGrantsAllow(grants, queue.config.granted, action)) return;
    const arn = `arn:aws:sqs:${options.region ?? 'us-east-1'}:${LOCAL_ACCOUNT_ID}:${queue.config.name}`;
    logRefusal(options.log, 'sqs', principal, { operation, queue: queue.config.name });
    throw new AwsServiceError('AccessDenied', notAuthorized(principal, `sqs:${action}`, arn), 403);
  };
  const checkBody = (body: unknown): string => {
    if (typeof body !== 'string' || body.length === 0) throw new AwsServiceError('MissingParameter', 'The request must contain the parameter MessageBody.');
    if (Buffer.byteLength(body) > MAX_MESSAGE_BYTES) throw new AwsServiceError('InvalidParameterValue', `One or more parameters are invalid. Reason: Message must be shorter than ${MAX_MESSAGE_BYTES} bytes.`);
    return body;
  };
  const seconds = (value: unknown, max: number, name: string): number => {
    if (value === undefined) return 0;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) throw new AwsServiceError('InvalidParameterValue', `Value ${String(value)} for parameter ${name} is invalid. Reason: Must be between 0 and ${max}.`);
    return value;
  };
  const md5 = (text: string) => createHash('md5').update(text).digest('hex');

  type Operation = (body: Body, call: { principal: Principal; operation: string }) => Body;
  const operation = (run: (queue: LocalQueue, body: Body) => Body): Operation => (body, call) => {
    const queue = queueNamed(body.QueueUrl);
    authorize(call.principal, call.operation, queue);
    return run(queue, body);
  };
  const operations = new Map<string, Operation>([
    ['SendMessage', operation((queue, body) => {
      const text = checkBody(body.MessageBody);
      const id = queue.send(text, body.MessageGroupId as string | undefined, seconds(body.DelaySeconds, MAX_DELAY_SECONDS, 'DelaySeconds'));
      return { MessageId: id, MD5OfMessageBody: md5(text) };
    })],
    ['SendMessageBatch', operation((queue, body) => {
      const entries = body.Entries;
      if (!Array.isArray(entries) || entries.length === 0 || entries.length > MAX_BATCH) throw new AwsServiceError('TooManyEntriesInBatchRequest', `Maximum number of entries per request are ${MAX_BATCH}.`);
      const successful = (entries as Body[]).map((entry) => {
        const text = checkBody(entry.MessageBody);
        return { Id: entry.Id, MessageId: queue.send(text, entry.MessageGroupId as string | undefined, seconds(entry.DelaySeconds, MAX_DELAY_SECONDS, 'DelaySeconds')), MD5OfMessageBody: md5(text) };
      });
      return { Successful: successful, Failed: [] };
    })],
    ['ChangeMessageVisibility', operation((queue, body) => {
      queue.changeVisibility(String(body.ReceiptHandle), seconds(body.VisibilityTimeout, MAX_VISIBILITY_SECONDS, 'VisibilityTimeout'));
      return {};
    })],
    ['DeleteMessage', operation((queue, body) => {
      queue.delete(String(body.ReceiptHandle));
      return {};
    })],
    ['ReceiveMessage', operation((queue, body) => {
      const max = typeof body.MaxNumberOfMessages === 'number' ? Math.min(MAX_BATCH, Math.max(1, body.MaxNumberOfMessages)) : 1;
      return { Messages: queue.receive(max).map((message) => ({ MessageId: message.messageId, ReceiptHandle: message.receiptHandle, Body: message.body, MD5OfBody: md5(message.body), Attributes: message.attributes })) };
    })],
    ['GetQueueAttributes', operation((queue) => ({ Attributes: { ApproximateNumberOfMessages: String(queue.depth), VisibilityTimeout: String(queue.config.visibilityTimeoutSeconds), MessageRetentionPeriod: String(queue.config.retentionSeconds) } }))],
  ]);

  const server = await startAwsJsonStandin({
    name: 'SQS',
    port: 0,
    service: { signingName: 'sqs', targetPrefix: 'AmazonSQS', unknownOperation: 'UnsupportedOperation', internalError: { type: 'InternalError', message: 'Internal error in the local SQS stand-in.' } },
    verifier: options.verifier,
    log: options.log,
    operations,
  });
  baseUrl = server.url;
  return {
    url: server.url,
    queueUrl: (name) => `${baseUrl}/${LOCAL_ACCOUNT_ID}/${name}`,
    queue: (granted) => {
      const queue = [...queues.values()].find((candidate) => candidate.config.granted === granted);
      if (!queue) throw new Error(`no local queue for ${granted}`);
      return queue;
    },
    close: server.close,
  };
}
