import type { DomainEvent, RecordViews, StoredChange } from './domain-events.ts';
import { domainEventOf } from './domain-events.ts';

/** Where events go (EventBridge in AWS and locally, through its endpoint). */
export interface EventBus {
  /** Publishes in order; answers the indexes of the events the bus did not accept. */
  publish(events: readonly DomainEvent[]): Promise<{ failed: readonly number[] }>;
}

/** A change read from the stream, with its position there (what a retry restarts from). */
export interface PositionedChange {
  readonly position: string;
  /** Undefined for an item that is no paymethod or document: it has nothing to publish. */
  readonly change: StoredChange | undefined;
}

export interface PublishOutcome {
  published: number;
  /** Changes that mean nothing to a consumer (pending sessions, internal writes, other items). */
  ignored: number;
  /** The first change whose event was not accepted: it and everything after it must be delivered again. */
  retryFrom?: string;
}

/**
 * Publishes the events of a batch of committed changes, in stream order. When
 * the bus refuses some, the batch is retried from the earliest refused change,
 * so nothing is lost; the events after it that were accepted are published
 * again, which is why every event carries a stable `event_id` to deduplicate on.
 */
export async function publishChanges(batch: readonly PositionedChange[], deps: { bus: EventBus; views: RecordViews }): Promise<PublishOutcome> {
  const events: DomainEvent[] = [];
  const positions: string[] = [];
  for (const { position, change } of batch) {
    const event = change && domainEventOf(change, deps.views);
    if (!event) continue;
    events.push(event);
    positions.push(position);
  }
  const ignored = batch.length - events.length;
  if (events.length === 0) return { published: 0, ignored };
  const { failed } = await deps.bus.publish(events);
  if (failed.length === 0) return { published: events.length, ignored };
  const first = Math.min(...failed);
  return { published: first, ignored, retryFrom: positions[first] };
}
