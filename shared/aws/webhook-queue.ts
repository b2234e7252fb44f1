import { ChangeMessageVisibilityCommand, SQSClient, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { MessageRef } from '#shared/domain/webhooks/model.ts';
import type { DeliveryQueue } from '#shared/domain/webhooks/ports.ts';
import { SQS_BUDGET, awsClient } from './client-config.ts';

export const sqs = /* @__PURE__ */ awsClient(SQSClient, 'SQS', SQS_BUDGET);

/** SQS takes ten entries a batch. */
const BATCH = 10;

/**
 * The delivery queue. MessageGroupId is the endpoint: on a standard queue
 * that makes it an SQS fair queue, whose receives favour endpoints with few
 * messages in flight over one with a backlog (docs/webhooks.md, "Isolation").
 */
export class SqsDeliveryQueue implements DeliveryQueue {
  constructor(
    private readonly client: Pick<SQSClient, 'send'>,
    private readonly queueUrl: string,
  ) {}

  async enqueue(refs: readonly MessageRef[], delaySeconds?: number): Promise<void> {
    for (let start = 0; start < refs.length; start += BATCH) {
      const entries = refs.slice(start, start + BATCH).map((ref, index) => ({
        Id: String(index),
        MessageBody: JSON.stringify(ref),
        MessageGroupId: ref.webhook_endpoint_id,
        ...(delaySeconds !== undefined ? { DelaySeconds: delaySeconds } : {}),
      }));
      const { Failed = [] } = await this.client.send(new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: entries }));
      if (Failed.length > 0) throw new Error(`the delivery queue refused ${Failed.length} of ${entries.length} entries (${Failed[0]?.Code ?? 'unknown'})`);
    }
  }

  /** A received entry shows again after `seconds` (at most 12 hours): the retry schedule's wait, in the queue itself. */
  async showAgainIn(receiptHandle: string, seconds: number): Promise<void> {
    await this.client.send(new ChangeMessageVisibilityCommand({ QueueUrl: this.queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: seconds }));
  }
}
