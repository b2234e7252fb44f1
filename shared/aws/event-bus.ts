import { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { EventBridgeClient, PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type { DomainEvent } from '#shared/domain/events/domain-events.ts';
import type { EventBus } from '#shared/domain/events/publish.ts';

/** PutEvents takes at most 10 entries per call. */
const ENTRIES_PER_CALL = 10;

/**
 * The EventBus port on an EventBridge bus. PutEvents is not all-or-nothing:
 * each entry succeeds or fails on its own, so failures are reported per event
 * (a whole call that fails counts all of its entries).
 */
export class EventBridgeBus implements EventBus {
  constructor(
    private readonly client: EventBridgeClient,
    private readonly eventBusName: string,
  ) {}

  async publish(events: readonly DomainEvent[]): Promise<{ failed: readonly number[] }> {
    const calls: Array<Promise<number[]>> = [];
    for (let start = 0; start < events.length; start += ENTRIES_PER_CALL) {
      const chunk = events.slice(start, start + ENTRIES_PER_CALL);
      calls.push(this.put(chunk).then((failed) => failed.map((index) => start + index)));
    }
    return { failed: (await Promise.all(calls)).flat() };
  }

  private async put(chunk: readonly DomainEvent[]): Promise<number[]> {
    const entries: PutEventsRequestEntry[] = chunk.map((event) => ({
      EventBusName: this.eventBusName,
      Source: event.source,
      DetailType: event.detailType,
      Detail: JSON.stringify(event.detail),
      Time: new Date(event.detail.occurred_at),
    }));
    const result = await this.client.send(new PutEventsCommand({ Entries: entries }));
    if (!result.FailedEntryCount) return [];
    return (result.Entries ?? []).flatMap((entry, index) => (entry.ErrorCode ? [index] : []));
  }
}
