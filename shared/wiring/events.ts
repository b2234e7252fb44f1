import { eventBridge } from '#shared/aws/eventbridge.ts';
import { EventBridgeBus } from '#shared/aws/event-bus.ts';
import { config } from '#shared/config.ts';
import { documentView } from '#shared/domain/documents/document.ts';
import type { RecordViews } from '#shared/domain/events/domain-events.ts';
import type { EventBus } from '#shared/domain/events/publish.ts';
import { paymethodReadView } from '#shared/http/paymethods.ts';
import { once } from './once.ts';

/** The views GET answers with: an event's detail is the record a GET would show at that moment. */
export const recordViews: RecordViews = {
  paymethod: paymethodReadView,
  document: documentView,
};

export const eventBus = /* @__PURE__ */ once((): EventBus => new EventBridgeBus(eventBridge, config.eventBusName));

export const publishDeps = () => ({ bus: eventBus(), views: recordViews });
